"""Protected checks for task hard-017-scripting-medium (scripting, medium): one test per semantic check.

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
    assert (APP / 'garnet.sh').is_file()


def test_script_executable():
    import os
    assert os.access(APP / 'garnet.sh', os.X_OK)


def test_greets_first_name():
    assert run(['bash', 'garnet.sh', 'rupert']).stdout.strip() == 'Hi, rupert!'


def test_greets_other_name():
    assert run(['bash', 'garnet.sh', 'zoe']).stdout.strip() == 'Hi, zoe!'
