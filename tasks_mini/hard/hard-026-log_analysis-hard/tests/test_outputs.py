"""Protected checks for task hard-026-log_analysis-hard (log_analysis, hard): one test per semantic check.

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
    assert (APP / 'garden.txt').is_file()


def test_three_lines():
    assert len(lines('garden.txt')) == 3


def test_top_path():
    assert lines('garden.txt')[0].split() == ['10', '/island']


def test_ranking_exact():
    assert [l.split() for l in lines('garden.txt')] == [['10', '/island'], ['10', '/onyx'], ['7', '/stone']]


def test_hours_file_exists():
    assert (APP / 'errors_by_hour.txt').is_file()


def test_hours_exact():
    assert read('errors_by_hour.txt') == '13 1\n15 1\n16 2\n18 1\n20 1\n21 1\n23 1\n'


def test_log_unchanged():
    assert read('app.log') == '2026-03-28T13:00:00 INFO 10.0.4.38 GET /stone 200\n2026-03-18T15:01:00 WARN 10.0.7.88 GET /glacier 404\n2026-03-07T13:02:00 ERROR 10.0.7.222 GET /stone 500\n2026-03-17T21:03:00 ERROR 10.0.7.222 GET /onyx 200\n2026-03-18T08:04:00 WARN 10.0.8.111 GET /island 500\n2026-03-09T18:05:00 ERROR 10.0.8.111 GET /onyx 404\n2026-03-25T02:06:00 INFO 10.0.7.88 GET /glacier 200\n2026-03-02T05:07:00 INFO 10.0.7.88 GET /glacier 200\n2026-03-23T21:08:00 INFO 10.0.7.88 GET /stone 200\n2026-03-05T21:09:00 INFO 10.0.7.88 GET /solar 301\n2026-03-21T07:10:00 INFO 10.0.1.186 GET /solar 404\n2026-03-22T03:11:00 WARN 10.0.4.38 GET /island 200\n2026-03-01T20:12:00 ERROR 10.0.4.38 GET /onyx 500\n2026-03-25T00:13:00 INFO 10.0.1.186 GET /island 404\n2026-03-27T23:14:00 ERROR 10.0.7.88 GET /onyx 200\n2026-03-02T16:15:00 ERROR 10.0.8.111 GET /island 200\n2026-03-03T10:16:00 INFO 10.0.1.186 GET /island 200\n2026-03-18T14:17:00 INFO 10.0.7.88 GET /island 404\n2026-03-27T16:18:00 ERROR 10.0.7.222 GET /solar 200\n2026-03-07T05:19:00 INFO 10.0.8.111 GET /onyx 301\n2026-03-14T06:20:00 INFO 10.0.7.222 GET /stone 200\n2026-03-17T14:21:00 INFO 10.0.7.88 GET /onyx 200\n2026-03-10T15:22:00 INFO 10.0.4.38 GET /onyx 200\n2026-03-18T08:23:00 INFO 10.0.1.186 GET /onyx 200\n2026-03-26T06:24:00 INFO 10.0.7.88 GET /island 200\n2026-03-10T00:25:00 WARN 10.0.7.88 GET /island 404\n2026-03-12T21:26:00 INFO 10.0.1.186 GET /island 200\n2026-03-14T01:27:00 INFO 10.0.1.186 GET /onyx 200\n2026-03-22T14:28:00 INFO 10.0.1.186 GET /stone 301\n2026-03-25T13:29:00 INFO 10.0.1.186 GET /glacier 200\n2026-03-17T18:30:00 INFO 10.0.4.38 GET /glacier 500\n2026-03-07T03:31:00 INFO 10.0.7.222 GET /onyx 404\n2026-03-26T15:32:00 ERROR 10.0.4.38 GET /stone 404\n2026-03-05T23:33:00 WARN 10.0.7.222 GET /island 200\n2026-03-12T14:34:00 WARN 10.0.4.38 GET /stone 500\n'
