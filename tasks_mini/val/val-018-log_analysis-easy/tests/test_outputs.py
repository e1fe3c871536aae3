"""Protected checks for task val-018-log_analysis-easy (log_analysis, easy): one test per semantic check.

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
    assert (APP / 'meteor.txt').is_file()


def test_is_a_number():
    assert read('meteor.txt').strip().isdigit()


def test_count_correct():
    assert int(read('meteor.txt')) == 0


def test_log_unchanged():
    assert read('app.log') == '2026-03-13T09:00:00 INFO 10.0.4.72 GET /lotus 404\n2026-03-28T21:01:00 INFO 10.0.5.44 GET /amber 301\n2026-03-26T16:02:00 ERROR 10.0.5.44 GET /lunar 200\n2026-03-10T15:03:00 ERROR 10.0.2.158 GET /lotus 200\n2026-03-22T02:04:00 ERROR 10.0.4.72 GET /amber 301\n2026-03-12T17:05:00 INFO 10.0.9.253 GET /lunar 301\n2026-03-11T22:06:00 INFO 10.0.2.158 GET /lotus 200\n2026-03-07T18:07:00 INFO 10.0.4.72 GET /lunar 404\n2026-03-01T23:08:00 INFO 10.0.9.253 GET /comet 500\n2026-03-20T21:09:00 INFO 10.0.2.158 GET /lotus 200\n2026-03-05T10:10:00 INFO 10.0.5.44 GET /amber 200\n2026-03-23T21:11:00 INFO 10.0.5.44 GET /mirror 200\n2026-03-05T18:12:00 INFO 10.0.5.44 GET /comet 200\n2026-03-05T11:13:00 ERROR 10.0.9.253 GET /mirror 404\n'
