"""Protected checks for task hard-016-scripting-medium (scripting, medium): one test per semantic check.

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
    assert (APP / 'beacon.sh').is_file()


def test_script_executable():
    import os
    assert os.access(APP / 'beacon.sh', os.X_OK)


def test_greets_first_name():
    assert run(['bash', 'beacon.sh', 'peggy']).stdout.strip() == 'Hello, peggy!'


def test_greets_other_name():
    assert run(['bash', 'beacon.sh', 'alice']).stdout.strip() == 'Hello, alice!'
