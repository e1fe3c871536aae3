"""Protected checks for task val-020-log_analysis-medium (log_analysis, medium): one test per semantic check.

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
    assert (APP / 'lantern.txt').is_file()


def test_count_line():
    assert lines('lantern.txt')[0].strip() == '7'


def test_paths_listed():
    assert lines('lantern.txt')[1:] == ['/maple', '/north', '/quill']


def test_log_unchanged():
    assert read('access.log') == '2026-03-02T17:00:00 INFO 10.0.4.18 GET /galaxy 200\n2026-03-24T00:01:00 WARN 10.0.4.18 GET /north 500\n2026-03-01T22:02:00 INFO 10.0.4.18 GET /galaxy 200\n2026-03-06T05:03:00 INFO 10.0.3.248 GET /galaxy 200\n2026-03-20T00:04:00 INFO 10.0.3.248 GET /north 500\n2026-03-04T23:05:00 INFO 10.0.7.184 GET /maple 404\n2026-03-06T00:06:00 INFO 10.0.3.248 GET /maple 200\n2026-03-09T02:07:00 INFO 10.0.3.248 GET /galaxy 200\n2026-03-13T07:08:00 INFO 10.0.3.248 GET /galaxy 200\n2026-03-10T13:09:00 INFO 10.0.4.18 GET /marble 200\n2026-03-16T11:10:00 WARN 10.0.7.184 GET /marble 500\n2026-03-07T02:11:00 INFO 10.0.3.248 GET /galaxy 200\n2026-03-23T19:12:00 INFO 10.0.3.248 GET /galaxy 301\n2026-03-05T19:13:00 ERROR 10.0.3.248 GET /quill 200\n2026-03-02T19:14:00 INFO 10.0.3.248 GET /marble 200\n2026-03-28T09:15:00 WARN 10.0.3.248 GET /maple 200\n2026-03-26T21:16:00 INFO 10.0.3.248 GET /north 200\n2026-03-26T23:17:00 WARN 10.0.7.184 GET /maple 200\n2026-03-20T12:18:00 ERROR 10.0.3.248 GET /maple 404\n2026-03-10T00:19:00 WARN 10.0.4.18 GET /quill 301\n2026-03-11T18:20:00 INFO 10.0.7.184 GET /maple 500\n2026-03-10T12:21:00 INFO 10.0.7.184 GET /marble 200\n2026-03-27T14:22:00 INFO 10.0.3.248 GET /galaxy 200\n2026-03-01T04:23:00 INFO 10.0.4.18 GET /north 404\n2026-03-13T07:24:00 INFO 10.0.3.248 GET /galaxy 301\n2026-03-20T02:25:00 WARN 10.0.4.18 GET /maple 500\n2026-03-19T02:26:00 INFO 10.0.4.18 GET /maple 404\n2026-03-13T08:27:00 INFO 10.0.4.18 GET /marble 500\n2026-03-24T09:28:00 INFO 10.0.7.184 GET /galaxy 200\n2026-03-01T15:29:00 WARN 10.0.4.18 GET /north 200\n2026-03-01T15:30:00 INFO 10.0.7.184 GET /galaxy 200\n2026-03-22T01:31:00 INFO 10.0.3.248 GET /quill 404\n2026-03-27T12:32:00 INFO 10.0.4.18 GET /quill 404\n2026-03-07T07:33:00 INFO 10.0.7.184 GET /north 500\n2026-03-05T01:34:00 WARN 10.0.3.248 GET /quill 200\n2026-03-22T13:35:00 INFO 10.0.7.184 GET /marble 301\n2026-03-22T19:36:00 INFO 10.0.7.184 GET /north 200\n2026-03-11T11:37:00 WARN 10.0.7.184 GET /quill 404\n2026-03-22T19:38:00 ERROR 10.0.4.18 GET /marble 500\n2026-03-14T02:39:00 INFO 10.0.7.184 GET /marble 500\n2026-03-19T17:40:00 ERROR 10.0.4.18 GET /north 200\n2026-03-04T12:41:00 WARN 10.0.7.184 GET /maple 200\n2026-03-25T18:42:00 INFO 10.0.3.248 GET /quill 200\n2026-03-12T09:43:00 ERROR 10.0.3.248 GET /galaxy 200\n'
