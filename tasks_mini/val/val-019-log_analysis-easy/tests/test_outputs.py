"""Protected checks for task val-019-log_analysis-easy (log_analysis, easy): one test per semantic check.

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
    assert (APP / 'marble.txt').is_file()


def test_is_a_number():
    assert read('marble.txt').strip().isdigit()


def test_count_correct():
    assert int(read('marble.txt')) == 8


def test_log_unchanged():
    assert read('server.log') == '2026-03-14T12:00:00 ERROR 10.0.7.197 GET /ocean 301\n2026-03-15T13:01:00 INFO 10.0.0.63 GET /valley 301\n2026-03-10T18:02:00 ERROR 10.0.0.63 GET /cherry 200\n2026-03-05T04:03:00 WARN 10.0.7.197 GET /valley 500\n2026-03-14T15:04:00 ERROR 10.0.8.35 GET /ocean 200\n2026-03-26T11:05:00 WARN 10.0.0.63 GET /cable 200\n2026-03-20T12:06:00 INFO 10.0.7.197 GET /meteor 404\n2026-03-07T05:07:00 INFO 10.0.8.35 GET /cherry 301\n2026-03-26T14:08:00 WARN 10.0.8.35 GET /cable 500\n2026-03-10T20:09:00 INFO 10.0.7.197 GET /cherry 404\n2026-03-24T20:10:00 ERROR 10.0.8.35 GET /cherry 200\n2026-03-17T11:11:00 WARN 10.0.7.197 GET /valley 301\n2026-03-18T08:12:00 ERROR 10.0.8.35 GET /valley 200\n2026-03-15T18:13:00 ERROR 10.0.7.197 GET /cherry 301\n2026-03-05T03:14:00 INFO 10.0.7.197 GET /cable 200\n2026-03-03T12:15:00 INFO 10.0.0.63 GET /valley 200\n2026-03-11T10:16:00 INFO 10.0.0.63 GET /valley 200\n2026-03-16T04:17:00 ERROR 10.0.7.197 GET /valley 404\n2026-03-17T14:18:00 INFO 10.0.7.197 GET /meteor 404\n2026-03-09T21:19:00 ERROR 10.0.7.197 GET /ocean 404\n'
