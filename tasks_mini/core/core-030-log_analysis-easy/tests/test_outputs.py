"""Protected checks for task core-030-log_analysis-easy (log_analysis, easy): one test per semantic check.

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
    assert (APP / 'island.txt').is_file()


def test_is_a_number():
    assert read('island.txt').strip().isdigit()


def test_count_correct():
    assert int(read('island.txt')) == 3


def test_log_unchanged():
    assert read('server.log') == '2026-03-21T09:00:00 INFO 10.0.0.205 GET /winter 301\n2026-03-28T08:01:00 WARN 10.0.0.205 GET /cable 200\n2026-03-14T20:02:00 ERROR 10.0.9.147 GET /winter 301\n2026-03-22T13:03:00 INFO 10.0.9.147 GET /cable 301\n2026-03-19T01:04:00 WARN 10.0.7.133 GET /winter 500\n2026-03-25T04:05:00 INFO 10.0.7.133 GET /winter 200\n2026-03-12T19:06:00 ERROR 10.0.0.205 GET /cable 301\n2026-03-21T03:07:00 ERROR 10.0.0.205 GET /field 301\n2026-03-16T19:08:00 INFO 10.0.0.205 GET /sapphire 500\n2026-03-20T17:09:00 INFO 10.0.9.147 GET /cable 404\n2026-03-04T16:10:00 INFO 10.0.9.147 GET /winter 200\n2026-03-17T15:11:00 INFO 10.0.7.133 GET /winter 200\n2026-03-06T20:12:00 INFO 10.0.0.205 GET /winter 200\n2026-03-07T23:13:00 INFO 10.0.7.133 GET /cable 200\n2026-03-03T12:14:00 WARN 10.0.7.133 GET /cotton 200\n2026-03-14T11:15:00 INFO 10.0.0.205 GET /winter 404\n2026-03-20T00:16:00 INFO 10.0.9.147 GET /field 301\n2026-03-19T09:17:00 INFO 10.0.7.133 GET /sapphire 200\n2026-03-26T09:18:00 INFO 10.0.7.133 GET /field 200\n'
