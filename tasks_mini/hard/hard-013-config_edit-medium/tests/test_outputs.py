"""Protected checks for task hard-013-config_edit-medium (config_edit, medium): one test per semantic check.

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


def test_max_conn_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('settings.ini').get('max_conn') == ['498']


def test_backup_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('settings.ini').get('backup') == ['glacier']


def test_log_level_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('settings.ini').get('log_level') == ['dune']


def test_others_unchanged():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    c = conf('settings.ini')
    assert {k: c.get(k) for k in ['cache_size', 'mode']} == {'cache_size': ['359'], 'mode': ['summit']}


def test_no_junk_lines():
    assert all(l.startswith('#') or ' = ' in l for l in lines('settings.ini') if l.strip())
