"""Protected checks for task val-012-scripting-easy (scripting, easy): one test per semantic check.

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


def test_script_exists():
    assert (APP / 'harbor.sh').is_file()


def test_script_executable():
    import os
    assert os.access(APP / 'harbor.sh', os.X_OK)


def test_prints_message():
    r = run(['bash', 'harbor.sh'])
    assert r.stdout.strip() == 'cloud garden falcon'


def test_exits_zero():
    assert run(['bash', 'harbor.sh']).returncode == 0
