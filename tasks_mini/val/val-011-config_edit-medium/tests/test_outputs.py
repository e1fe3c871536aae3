"""Protected checks for task val-011-config_edit-medium (config_edit, medium): one test per semantic check.

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


def test_backup_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('settings.ini').get('backup') == ['valley']


def test_timeout_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('settings.ini').get('timeout') == ['143']


def test_retries_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('settings.ini').get('retries') == ['195']


def test_others_unchanged():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    c = conf('settings.ini')
    assert {k: c.get(k) for k in ['host', 'log_level', 'max_conn']} == {'host': ['pepper'], 'log_level': ['prism'], 'max_conn': ['316']}


def test_no_junk_lines():
    assert all(l.startswith('#') or ' = ' in l for l in lines('settings.ini') if l.strip())
