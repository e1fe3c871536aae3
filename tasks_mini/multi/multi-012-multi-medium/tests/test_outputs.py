"""Protected checks for task multi-012-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_host_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step1/app.conf').get('host') == ['cedar']


def test_step1_region_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step1/app.conf').get('region') == ['glacier']


def test_step1_max_conn_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step1/app.conf').get('max_conn') == ['26']


def test_step1_others_unchanged():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    c = conf('step1/app.conf')
    assert {k: c.get(k) for k in ['log_level', 'retries', 'timeout', 'user']} == {'timeout': ['196'], 'log_level': ['salt'], 'user': ['nebula'], 'retries': ['501']}


def test_step1_no_junk_lines():
    assert all(l.startswith('#') or ' = ' in l for l in lines('step1/app.conf') if l.strip())


def test_step2_dest_exists():
    assert (APP / 'step2/unpacked').is_dir()


def test_step2_file1_extracted():
    assert read('step2/unpacked/jasmine/horizon.txt') == 'indigo granite north velvet\n'


def test_step2_file2_extracted():
    assert read('step2/unpacked/jasmine/marble.txt') == 'saffron meteor salt cherry\n'


def test_step2_archive_kept():
    assert (APP / 'step2/jasmine.tar.gz').is_file()
