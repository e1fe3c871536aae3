"""Protected checks for task hard-014-config_edit-hard (config_edit, hard): one test per semantic check.

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


def test_valid_json():
    json.loads(read('settings.json'))


def test_workers_set():
    assert json.loads(read('settings.json'))['limits']['workers'] == 283


def test_feature_appended():
    assert json.loads(read('settings.json'))['features'] == ['river', 'tulip', 'iris', 'silver']


def test_rest_unchanged():
    d = json.loads(read('settings.json'))
    assert d['service'] == {'name': 'comet', 'port': 6613} and d['limits']['timeout'] == 411
