"""Protected checks for task multi-006-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_timeout_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step1/settings.ini').get('timeout') == ['449']


def test_step1_others_unchanged():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    c = conf('step1/settings.ini')
    assert {k: c.get(k) for k in ['port', 'user', 'workers']} == {'user': ['pebble'], 'workers': ['334'], 'port': ['1115']}


def test_step1_no_junk_lines():
    assert all(l.startswith('#') or ' = ' in l for l in lines('step1/settings.ini') if l.strip())


def test_step2_output_exists():
    assert (APP / 'step2/lemon.txt').is_file()


def test_step2_distinct_count():
    assert len(lines('step2/lemon.txt')) == 3


def test_step2_no_duplicates():
    assert len(set(lines('step2/lemon.txt'))) == len(lines('step2/lemon.txt'))


def test_step2_content_exact():
    assert lines('step2/lemon.txt') == ['10.0.5.115', '10.0.5.29', '10.0.8.82']


def test_step2_log_unchanged():
    assert read('step2/server.log') == '2026-03-08T16:00:00 ERROR 10.0.8.82 GET /candle 500\n2026-03-06T05:01:00 INFO 10.0.5.115 GET /tulip 200\n2026-03-01T07:02:00 INFO 10.0.8.82 GET /indigo 200\n2026-03-09T20:03:00 INFO 10.0.8.82 GET /tulip 301\n2026-03-26T00:04:00 WARN 10.0.8.82 GET /north 200\n2026-03-23T12:05:00 INFO 10.0.5.29 GET /candle 301\n2026-03-27T08:06:00 WARN 10.0.8.82 GET /candle 404\n2026-03-19T05:07:00 INFO 10.0.8.82 GET /north 200\n2026-03-14T04:08:00 INFO 10.0.8.82 GET /tulip 200\n2026-03-11T05:09:00 ERROR 10.0.5.115 GET /north 500\n2026-03-09T14:10:00 INFO 10.0.5.115 GET /tulip 500\n2026-03-27T06:11:00 INFO 10.0.8.82 GET /tulip 404\n2026-03-06T09:12:00 ERROR 10.0.5.29 GET /cherry 200\n2026-03-04T06:13:00 INFO 10.0.5.29 GET /tulip 500\n2026-03-16T06:14:00 INFO 10.0.8.82 GET /tulip 404\n2026-03-21T03:15:00 INFO 10.0.5.115 GET /indigo 500\n2026-03-27T05:16:00 ERROR 10.0.5.29 GET /tulip 500\n2026-03-18T07:17:00 INFO 10.0.5.29 GET /indigo 200\n2026-03-25T07:18:00 INFO 10.0.5.29 GET /tulip 500\n2026-03-21T13:19:00 INFO 10.0.5.29 GET /cherry 200\n2026-03-03T03:20:00 INFO 10.0.8.82 GET /candle 301\n2026-03-18T13:21:00 INFO 10.0.5.29 GET /cherry 404\n2026-03-04T00:22:00 INFO 10.0.8.82 GET /north 200\n2026-03-03T17:23:00 INFO 10.0.5.29 GET /cherry 200\n2026-03-16T10:24:00 ERROR 10.0.5.29 GET /north 500\n2026-03-16T23:25:00 INFO 10.0.5.29 GET /tulip 200\n2026-03-02T08:26:00 ERROR 10.0.5.115 GET /indigo 404\n2026-03-07T14:27:00 WARN 10.0.5.29 GET /cherry 200\n2026-03-18T23:28:00 INFO 10.0.5.115 GET /candle 200\n2026-03-01T02:29:00 INFO 10.0.5.115 GET /cherry 200\n2026-03-05T06:30:00 INFO 10.0.8.82 GET /tulip 200\n2026-03-28T03:31:00 ERROR 10.0.5.115 GET /tulip 200\n2026-03-15T19:32:00 WARN 10.0.5.115 GET /candle 301\n2026-03-21T08:33:00 INFO 10.0.5.115 GET /cherry 500\n2026-03-27T10:34:00 INFO 10.0.5.115 GET /indigo 301\n2026-03-05T23:35:00 INFO 10.0.5.29 GET /cherry 301\n2026-03-24T09:36:00 WARN 10.0.5.29 GET /indigo 500\n2026-03-06T22:37:00 ERROR 10.0.5.29 GET /north 301\n2026-03-28T08:38:00 INFO 10.0.5.115 GET /tulip 200\n2026-03-08T05:39:00 WARN 10.0.5.29 GET /tulip 404\n2026-03-15T12:40:00 ERROR 10.0.5.29 GET /candle 200\n2026-03-03T12:41:00 ERROR 10.0.5.115 GET /tulip 200\n2026-03-28T10:42:00 INFO 10.0.5.115 GET /indigo 500\n2026-03-16T03:43:00 ERROR 10.0.5.115 GET /indigo 200\n2026-03-06T13:44:00 WARN 10.0.8.82 GET /candle 404\n'
