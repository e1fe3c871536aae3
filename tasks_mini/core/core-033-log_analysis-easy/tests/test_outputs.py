"""Protected checks for task core-033-log_analysis-easy (log_analysis, easy): one test per semantic check.

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
    assert (APP / 'prism.txt').is_file()


def test_is_a_number():
    assert read('prism.txt').strip().isdigit()


def test_count_correct():
    assert int(read('prism.txt')) == 2


def test_log_unchanged():
    assert read('access.log') == '2026-03-03T14:00:00 INFO 10.0.5.130 GET /badge 200\n2026-03-12T10:01:00 INFO 10.0.5.130 GET /iris 200\n2026-03-01T16:02:00 ERROR 10.0.4.217 GET /badge 404\n2026-03-01T04:03:00 ERROR 10.0.5.130 GET /iris 200\n2026-03-20T10:04:00 INFO 10.0.4.217 GET /cable 500\n2026-03-25T05:05:00 WARN 10.0.5.130 GET /iris 200\n2026-03-26T06:06:00 ERROR 10.0.7.243 GET /cable 500\n2026-03-20T08:07:00 ERROR 10.0.4.217 GET /cable 301\n2026-03-07T04:08:00 INFO 10.0.4.240 GET /badge 200\n2026-03-24T14:09:00 INFO 10.0.4.240 GET /cable 200\n2026-03-01T06:10:00 ERROR 10.0.7.243 GET /badge 200\n2026-03-12T07:11:00 WARN 10.0.5.130 GET /cable 500\n2026-03-20T23:12:00 INFO 10.0.4.240 GET /iris 301\n2026-03-17T04:13:00 INFO 10.0.4.240 GET /cable 200\n2026-03-18T12:14:00 INFO 10.0.4.240 GET /glacier 200\n2026-03-27T08:15:00 ERROR 10.0.4.217 GET /glacier 200\n'
