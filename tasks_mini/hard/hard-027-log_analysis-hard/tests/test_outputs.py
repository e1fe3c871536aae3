"""Protected checks for task hard-027-log_analysis-hard (log_analysis, hard): one test per semantic check.

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
    assert (APP / 'falcon.txt').is_file()


def test_three_lines():
    assert len(lines('falcon.txt')) == 3


def test_top_path():
    assert lines('falcon.txt')[0].split() == ['11', '/kettle']


def test_ranking_exact():
    assert [l.split() for l in lines('falcon.txt')] == [['11', '/kettle'], ['11', '/ridge'], ['10', '/indigo']]


def test_hours_file_exists():
    assert (APP / 'errors_by_hour.txt').is_file()


def test_hours_exact():
    assert read('errors_by_hour.txt') == '04 1\n08 1\n10 1\n15 2\n17 2\n'


def test_log_unchanged():
    assert read('server.log') == '2026-03-09T13:00:00 INFO 10.0.8.193 GET /lunar 200\n2026-03-23T21:01:00 WARN 10.0.1.157 GET /indigo 404\n2026-03-26T21:02:00 INFO 10.0.1.157 GET /ridge 200\n2026-03-15T08:03:00 ERROR 10.0.9.108 GET /indigo 404\n2026-03-11T10:04:00 INFO 10.0.1.157 GET /lunar 404\n2026-03-07T18:05:00 INFO 10.0.8.193 GET /indigo 200\n2026-03-23T12:06:00 WARN 10.0.3.99 GET /indigo 404\n2026-03-22T16:07:00 INFO 10.0.8.193 GET /indigo 301\n2026-03-13T17:08:00 INFO 10.0.8.193 GET /ridge 404\n2026-03-11T00:09:00 WARN 10.0.1.157 GET /ridge 200\n2026-03-08T01:10:00 WARN 10.0.1.24 GET /indigo 404\n2026-03-22T05:11:00 WARN 10.0.8.193 GET /ridge 200\n2026-03-03T17:12:00 ERROR 10.0.1.157 GET /ridge 200\n2026-03-16T19:13:00 INFO 10.0.9.108 GET /cotton 500\n2026-03-15T20:14:00 INFO 10.0.1.24 GET /kettle 404\n2026-03-20T21:15:00 INFO 10.0.1.24 GET /kettle 404\n2026-03-22T11:16:00 WARN 10.0.3.99 GET /indigo 500\n2026-03-26T09:17:00 INFO 10.0.1.157 GET /ridge 200\n2026-03-15T10:18:00 INFO 10.0.1.24 GET /kettle 200\n2026-03-05T04:19:00 ERROR 10.0.1.157 GET /kettle 500\n2026-03-04T20:20:00 WARN 10.0.9.108 GET /lunar 301\n2026-03-14T19:21:00 INFO 10.0.1.157 GET /kettle 200\n2026-03-21T17:22:00 ERROR 10.0.8.193 GET /ridge 200\n2026-03-23T10:23:00 ERROR 10.0.1.24 GET /kettle 404\n2026-03-25T17:24:00 INFO 10.0.3.99 GET /lunar 200\n2026-03-08T02:25:00 INFO 10.0.1.157 GET /lunar 200\n2026-03-20T21:26:00 INFO 10.0.1.157 GET /ridge 200\n2026-03-19T03:27:00 INFO 10.0.3.99 GET /indigo 200\n2026-03-08T06:28:00 WARN 10.0.3.99 GET /cotton 200\n2026-03-24T22:29:00 INFO 10.0.1.24 GET /cotton 200\n2026-03-12T10:30:00 INFO 10.0.1.157 GET /ridge 200\n2026-03-13T21:31:00 INFO 10.0.1.157 GET /kettle 301\n2026-03-28T17:32:00 INFO 10.0.3.99 GET /kettle 200\n2026-03-17T04:33:00 WARN 10.0.1.157 GET /kettle 200\n2026-03-12T15:34:00 ERROR 10.0.9.108 GET /cotton 301\n2026-03-20T15:35:00 ERROR 10.0.1.157 GET /cotton 500\n2026-03-27T07:36:00 INFO 10.0.8.193 GET /indigo 200\n2026-03-14T04:37:00 INFO 10.0.1.24 GET /cotton 500\n2026-03-07T07:38:00 INFO 10.0.1.157 GET /indigo 200\n2026-03-15T06:39:00 INFO 10.0.9.108 GET /kettle 200\n2026-03-26T20:40:00 WARN 10.0.8.193 GET /kettle 200\n2026-03-28T04:41:00 INFO 10.0.1.157 GET /ridge 200\n2026-03-03T23:42:00 WARN 10.0.1.157 GET /ridge 200\n'
