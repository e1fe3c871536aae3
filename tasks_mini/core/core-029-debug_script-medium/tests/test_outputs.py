"""Protected checks for task core-029-debug_script-medium (debug_script, medium): one test per semantic check.

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
    (APP / 'storm.txt').unlink(missing_ok=True)
    r = run(['bash', 'valley.sh'])
    assert r.returncode == 0, r.stderr


def test_output_written():
    (APP / 'storm.txt').unlink(missing_ok=True)
    r = run(['bash', 'valley.sh'])
    assert (APP / 'storm.txt').is_file()


def test_output_correct():
    (APP / 'storm.txt').unlink(missing_ok=True)
    r = run(['bash', 'valley.sh'])
    assert read('storm.txt') == '1: copper stone desert\n2: anchor storm flint olive\n3: apple field sapphire forest indigo atlas\n4: indigo birch\n5: dawn oak coral\n'


def test_line_count():
    (APP / 'storm.txt').unlink(missing_ok=True)
    run(['bash', 'valley.sh'])
    assert len(lines('storm.txt')) == 5


def test_reads_input_file():
    assert 'quill_comet.txt' in read('valley.sh')
