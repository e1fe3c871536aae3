"""Protected checks for task hard-023-debug_script-hard (debug_script, hard): one test per semantic check.

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
    (APP / 'cedar.txt').unlink(missing_ok=True)
    r = run(['bash', 'pepper.sh'])
    assert r.returncode == 0, r.stderr


def test_output_written():
    (APP / 'cedar.txt').unlink(missing_ok=True)
    r = run(['bash', 'pepper.sh'])
    assert (APP / 'cedar.txt').is_file()


def test_output_correct():
    (APP / 'cedar.txt').unlink(missing_ok=True)
    r = run(['bash', 'pepper.sh'])
    assert read('cedar.txt') == 'step 1: dawn plum island\nstep 2: ridge jade\nstep 3: nickel galaxy marble birch frost horizon\nstep 4: polar stone solar comet lotus\nstep 5: glacier amber nickel\nstep 6: island cotton\nstep 7: horizon arrow granite garden solar salt\n'


def test_line_count():
    (APP / 'cedar.txt').unlink(missing_ok=True)
    run(['bash', 'pepper.sh'])
    assert len(lines('cedar.txt')) == 7


def test_reads_input_file():
    assert 'badge_cotton.txt' in read('pepper.sh')
