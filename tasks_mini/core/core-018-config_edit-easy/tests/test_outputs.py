"""Protected checks for task core-018-config_edit-easy (config_edit, easy): one test per semantic check.

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


def test_log_level_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('service.cfg').get('log_level') == ['flint']


def test_others_unchanged():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    c = conf('service.cfg')
    assert {k: c.get(k) for k in ['backup', 'host', 'region', 'user']} == {'host': ['violet'], 'user': ['granite'], 'backup': ['zephyr'], 'region': ['radar']}


def test_no_junk_lines():
    assert all(l.startswith('#') or ' = ' in l for l in lines('service.cfg') if l.strip())
