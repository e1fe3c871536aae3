"""Protected checks for task core-034-log_analysis-medium (log_analysis, medium): one test per semantic check.

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


def test_distinct_count():
    assert len(lines('island.txt')) == 5


def test_no_duplicates():
    assert len(set(lines('island.txt'))) == len(lines('island.txt'))


def test_content_exact():
    assert lines('island.txt') == ['10.0.0.19', '10.0.3.69', '10.0.5.100', '10.0.6.176', '10.0.7.43']


def test_log_unchanged():
    assert read('server.log') == '2026-03-26T03:00:00 WARN 10.0.5.100 GET /border 200\n2026-03-02T16:01:00 WARN 10.0.6.176 GET /juniper 200\n2026-03-24T14:02:00 INFO 10.0.7.43 GET /juniper 200\n2026-03-20T09:03:00 WARN 10.0.7.43 GET /cotton 500\n2026-03-12T23:04:00 ERROR 10.0.6.176 GET /hazel 200\n2026-03-18T04:05:00 INFO 10.0.7.43 GET /hazel 200\n2026-03-08T15:06:00 ERROR 10.0.6.176 GET /border 404\n2026-03-20T22:07:00 ERROR 10.0.6.176 GET /cotton 200\n2026-03-05T02:08:00 INFO 10.0.3.69 GET /spruce 404\n2026-03-22T03:09:00 INFO 10.0.3.69 GET /juniper 301\n2026-03-11T00:10:00 ERROR 10.0.5.100 GET /juniper 200\n2026-03-05T02:11:00 INFO 10.0.6.176 GET /border 500\n2026-03-27T00:12:00 ERROR 10.0.5.100 GET /juniper 301\n2026-03-16T01:13:00 INFO 10.0.0.19 GET /hazel 301\n2026-03-10T06:14:00 INFO 10.0.5.100 GET /juniper 200\n2026-03-14T05:15:00 INFO 10.0.6.176 GET /hazel 404\n2026-03-16T02:16:00 INFO 10.0.0.19 GET /juniper 500\n2026-03-08T15:17:00 INFO 10.0.6.176 GET /hazel 301\n2026-03-09T14:18:00 INFO 10.0.7.43 GET /hazel 301\n2026-03-23T14:19:00 INFO 10.0.3.69 GET /border 200\n2026-03-07T12:20:00 WARN 10.0.7.43 GET /spruce 200\n2026-03-16T00:21:00 INFO 10.0.7.43 GET /border 200\n2026-03-19T16:22:00 ERROR 10.0.5.100 GET /hazel 500\n2026-03-05T19:23:00 INFO 10.0.6.176 GET /hazel 404\n2026-03-25T00:24:00 ERROR 10.0.7.43 GET /spruce 404\n2026-03-06T11:25:00 INFO 10.0.7.43 GET /border 200\n'
