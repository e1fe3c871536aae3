"""Protected checks for task hard-024-log_analysis-medium (log_analysis, medium): one test per semantic check.

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
    assert (APP / 'cloud.txt').is_file()


def test_count_line():
    assert lines('cloud.txt')[0].strip() == '7'


def test_paths_listed():
    assert lines('cloud.txt')[1:] == ['/cotton', '/marble', '/north']


def test_log_unchanged():
    assert read('access.log') == '2026-03-09T11:00:00 INFO 10.0.1.202 GET /polar 301\n2026-03-06T10:01:00 ERROR 10.0.3.76 GET /marble 500\n2026-03-17T13:02:00 INFO 10.0.1.202 GET /marble 301\n2026-03-10T09:03:00 ERROR 10.0.2.221 GET /cotton 500\n2026-03-02T06:04:00 ERROR 10.0.2.221 GET /cotton 500\n2026-03-15T14:05:00 INFO 10.0.2.221 GET /north 301\n2026-03-26T07:06:00 INFO 10.0.3.76 GET /cotton 404\n2026-03-12T08:07:00 INFO 10.0.1.202 GET /north 404\n2026-03-27T16:08:00 INFO 10.0.2.221 GET /north 301\n2026-03-15T05:09:00 INFO 10.0.2.221 GET /north 200\n2026-03-06T09:10:00 WARN 10.0.2.221 GET /polar 200\n2026-03-19T15:11:00 INFO 10.0.3.76 GET /cotton 200\n2026-03-03T04:12:00 INFO 10.0.2.221 GET /marble 200\n2026-03-26T22:13:00 INFO 10.0.1.202 GET /north 200\n2026-03-19T18:14:00 INFO 10.0.3.76 GET /marble 200\n2026-03-27T15:15:00 INFO 10.0.1.202 GET /marble 200\n2026-03-12T05:16:00 ERROR 10.0.2.221 GET /basil 200\n2026-03-09T15:17:00 ERROR 10.0.2.221 GET /polar 301\n2026-03-19T19:18:00 WARN 10.0.1.202 GET /basil 200\n2026-03-14T06:19:00 INFO 10.0.1.202 GET /marble 404\n2026-03-26T15:20:00 WARN 10.0.1.202 GET /basil 301\n2026-03-23T18:21:00 INFO 10.0.1.202 GET /north 200\n2026-03-02T14:22:00 INFO 10.0.1.202 GET /north 200\n2026-03-04T18:23:00 INFO 10.0.3.76 GET /polar 200\n2026-03-04T01:24:00 ERROR 10.0.1.202 GET /north 301\n2026-03-18T18:25:00 INFO 10.0.3.76 GET /marble 301\n2026-03-01T07:26:00 INFO 10.0.1.202 GET /north 404\n2026-03-26T02:27:00 INFO 10.0.3.76 GET /marble 200\n2026-03-19T11:28:00 INFO 10.0.2.221 GET /marble 404\n2026-03-23T07:29:00 INFO 10.0.3.76 GET /north 200\n2026-03-10T16:30:00 ERROR 10.0.2.221 GET /north 301\n2026-03-01T02:31:00 INFO 10.0.2.221 GET /basil 500\n2026-03-10T09:32:00 INFO 10.0.1.202 GET /marble 301\n2026-03-18T07:33:00 ERROR 10.0.1.202 GET /marble 200\n2026-03-24T06:34:00 INFO 10.0.1.202 GET /cotton 404\n2026-03-09T17:35:00 WARN 10.0.1.202 GET /basil 200\n2026-03-17T19:36:00 INFO 10.0.1.202 GET /north 404\n'
