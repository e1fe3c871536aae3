"""Protected checks for task core-031-log_analysis-easy (log_analysis, easy): one test per semantic check.

The agent never sees this file: it is copied to /tests only after the agent phase.
"""
import json
import os
import pathlib
import subprocess

APP = pathlib.Path(os.environ.get("APP_DIR", "/app"))


def read(rel):
    return (APP / rel).read_text()


def lines(rel):
    return (APP / rel).read_text().splitlines()


def run(args, **kw):
    kw.setdefault("timeout", 20)
    kw.setdefault("cwd", APP)
    return subprocess.run(args, capture_output=True, text=True, **kw)


def test_output_exists():
    assert (APP / 'solar.txt').is_file()


def test_is_a_number():
    assert read('solar.txt').strip().isdigit()


def test_count_correct():
    assert int(read('solar.txt')) == 4


def test_log_unchanged():
    assert read('app.log') == '2026-03-08T15:00:00 INFO 10.0.9.62 GET /sky 200\n2026-03-12T09:01:00 INFO 10.0.0.198 GET /iris 404\n2026-03-22T21:02:00 INFO 10.0.0.198 GET /iris 301\n2026-03-03T06:03:00 INFO 10.0.0.198 GET /island 404\n2026-03-27T19:04:00 WARN 10.0.0.198 GET /silver 500\n2026-03-22T01:05:00 INFO 10.0.0.198 GET /arrow 500\n2026-03-23T16:06:00 WARN 10.0.3.185 GET /silver 404\n2026-03-19T15:07:00 INFO 10.0.9.62 GET /iris 200\n2026-03-25T04:08:00 WARN 10.0.0.198 GET /island 200\n2026-03-07T18:09:00 INFO 10.0.9.62 GET /island 404\n2026-03-13T13:10:00 ERROR 10.0.0.198 GET /iris 200\n2026-03-06T07:11:00 INFO 10.0.0.198 GET /iris 200\n2026-03-13T07:12:00 ERROR 10.0.9.62 GET /arrow 301\n2026-03-26T19:13:00 WARN 10.0.3.185 GET /iris 200\n'
