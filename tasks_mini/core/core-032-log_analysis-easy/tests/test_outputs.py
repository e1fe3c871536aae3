"""Protected checks for task core-032-log_analysis-easy (log_analysis, easy): one test per semantic check.

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
    assert (APP / 'violet.txt').is_file()


def test_is_a_number():
    assert read('violet.txt').strip().isdigit()


def test_count_correct():
    assert int(read('violet.txt')) == 3


def test_log_unchanged():
    assert read('app.log') == '2026-03-18T03:00:00 INFO 10.0.0.64 GET /jasmine 301\n2026-03-05T21:01:00 INFO 10.0.8.108 GET /quartz 200\n2026-03-05T16:02:00 ERROR 10.0.0.64 GET /garnet 301\n2026-03-26T18:03:00 ERROR 10.0.8.152 GET /desert 301\n2026-03-12T06:04:00 INFO 10.0.4.166 GET /desert 200\n2026-03-09T10:05:00 ERROR 10.0.3.129 GET /quartz 200\n2026-03-28T15:06:00 INFO 10.0.8.108 GET /jasmine 200\n2026-03-28T07:07:00 INFO 10.0.8.108 GET /quartz 200\n2026-03-01T00:08:00 WARN 10.0.0.64 GET /indigo 301\n2026-03-22T05:09:00 WARN 10.0.3.129 GET /jasmine 301\n2026-03-08T17:10:00 WARN 10.0.8.209 GET /desert 200\n2026-03-22T23:11:00 INFO 10.0.8.152 GET /desert 200\n2026-03-23T10:12:00 WARN 10.0.8.152 GET /garnet 200\n2026-03-19T21:13:00 INFO 10.0.8.108 GET /indigo 200\n2026-03-04T07:14:00 INFO 10.0.4.166 GET /indigo 200\n2026-03-16T14:15:00 INFO 10.0.8.152 GET /quartz 301\n2026-03-24T11:16:00 WARN 10.0.8.152 GET /garnet 200\n2026-03-19T04:17:00 INFO 10.0.8.152 GET /quartz 404\n'
