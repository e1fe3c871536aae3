"""Protected checks for task multi-007-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_region_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step1/server.conf').get('region') == ['spruce']


def test_step1_others_unchanged():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    c = conf('step1/server.conf')
    assert {k: c.get(k) for k in ['backup', 'cache_size', 'max_conn', 'mode', 'retries']} == {'mode': ['cable'], 'max_conn': ['251'], 'backup': ['nebula'], 'cache_size': ['176'], 'retries': ['337']}


def test_step1_no_junk_lines():
    assert all(l.startswith('#') or ' = ' in l for l in lines('step1/server.conf') if l.strip())


def test_step2_output_exists():
    assert (APP / 'step2/river.txt').is_file()


def test_step2_is_a_number():
    assert read('step2/river.txt').strip().isdigit()


def test_step2_count_correct():
    assert int(read('step2/river.txt')) == 3


def test_step2_log_unchanged():
    assert read('step2/web.log') == '2026-03-17T12:00:00 INFO 10.0.7.92 GET /solar 200\n2026-03-18T04:01:00 INFO 10.0.1.94 GET /island 500\n2026-03-20T09:02:00 WARN 10.0.4.73 GET /solar 200\n2026-03-22T05:03:00 INFO 10.0.4.73 GET /solar 200\n2026-03-25T20:04:00 INFO 10.0.0.160 GET /solar 301\n2026-03-19T12:05:00 ERROR 10.0.7.92 GET /island 200\n2026-03-28T09:06:00 INFO 10.0.4.73 GET /zephyr 301\n2026-03-09T18:07:00 ERROR 10.0.0.160 GET /zephyr 200\n2026-03-24T07:08:00 ERROR 10.0.4.73 GET /solar 200\n2026-03-24T01:09:00 INFO 10.0.7.92 GET /orchid 404\n2026-03-22T05:10:00 WARN 10.0.1.143 GET /island 301\n2026-03-14T12:11:00 INFO 10.0.0.160 GET /solar 200\n2026-03-21T20:12:00 INFO 10.0.1.94 GET /island 200\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
