"""Protected checks for task hard-015-config_edit-hard (config_edit, hard): one test per semantic check.

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


def test_still_parses():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('service.ini'))
    assert cp.sections() == ['cache', 'auth', 'database']


def test_target_changed():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('service.ini'))
    assert cp['cache']['timeout'] == '466'


def test_other_sections_unchanged():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('service.ini'))
    assert cp['auth']['timeout'] == '304'
    assert cp['database']['timeout'] == '231'


def test_enabled_flags_kept():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('service.ini'))
    assert all('enabled' in cp[s] for s in ['cache', 'auth', 'database'])
