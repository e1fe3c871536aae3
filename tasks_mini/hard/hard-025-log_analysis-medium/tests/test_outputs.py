"""Protected checks for task hard-025-log_analysis-medium (log_analysis, medium): one test per semantic check.

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
    assert (APP / 'olive.txt').is_file()


def test_count_line():
    assert lines('olive.txt')[0].strip() == '2'


def test_paths_listed():
    assert lines('olive.txt')[1:] == ['/canyon', '/nebula']


def test_log_unchanged():
    assert read('web.log') == '2026-03-09T14:00:00 INFO 10.0.8.217 GET /forest 500\n2026-03-15T00:01:00 INFO 10.0.0.108 GET /forest 200\n2026-03-10T15:02:00 ERROR 10.0.2.245 GET /forest 200\n2026-03-16T10:03:00 INFO 10.0.0.108 GET /canyon 404\n2026-03-02T15:04:00 ERROR 10.0.1.130 GET /forest 500\n2026-03-08T16:05:00 WARN 10.0.0.108 GET /nebula 500\n2026-03-12T05:06:00 WARN 10.0.8.217 GET /canyon 200\n2026-03-05T08:07:00 INFO 10.0.8.217 GET /nebula 301\n2026-03-08T11:08:00 INFO 10.0.2.245 GET /canyon 301\n2026-03-07T08:09:00 INFO 10.0.0.105 GET /forest 200\n2026-03-19T21:10:00 ERROR 10.0.8.217 GET /forest 200\n2026-03-24T12:11:00 INFO 10.0.8.217 GET /reef 200\n2026-03-07T12:12:00 ERROR 10.0.0.108 GET /forest 500\n2026-03-16T11:13:00 WARN 10.0.0.108 GET /canyon 200\n2026-03-15T11:14:00 WARN 10.0.0.105 GET /breeze 301\n2026-03-17T09:15:00 ERROR 10.0.1.130 GET /canyon 200\n2026-03-08T19:16:00 INFO 10.0.0.105 GET /breeze 200\n2026-03-01T22:17:00 INFO 10.0.0.108 GET /breeze 301\n2026-03-14T12:18:00 INFO 10.0.8.217 GET /breeze 200\n2026-03-01T09:19:00 INFO 10.0.2.245 GET /breeze 200\n2026-03-10T00:20:00 INFO 10.0.8.217 GET /breeze 500\n2026-03-21T11:21:00 WARN 10.0.0.108 GET /reef 200\n2026-03-08T16:22:00 INFO 10.0.2.245 GET /breeze 301\n2026-03-22T13:23:00 ERROR 10.0.0.108 GET /nebula 404\n2026-03-20T07:24:00 INFO 10.0.0.108 GET /reef 500\n2026-03-21T03:25:00 WARN 10.0.0.105 GET /reef 200\n2026-03-03T20:26:00 INFO 10.0.0.105 GET /breeze 200\n'
