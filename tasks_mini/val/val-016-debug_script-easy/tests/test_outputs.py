"""Protected checks for task val-016-debug_script-easy (debug_script, easy): one test per semantic check.

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


def test_script_runs_cleanly():
    (APP / 'sunset.txt').unlink(missing_ok=True)
    r = run(['bash', 'spark.sh'])
    assert r.returncode == 0, r.stderr


def test_output_written():
    (APP / 'sunset.txt').unlink(missing_ok=True)
    r = run(['bash', 'spark.sh'])
    assert (APP / 'sunset.txt').is_file()


def test_output_correct():
    (APP / 'sunset.txt').unlink(missing_ok=True)
    r = run(['bash', 'spark.sh'])
    assert read('sunset.txt') == 'coral cotton birch\n'
