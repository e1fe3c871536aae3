"""Protected checks for task hard-020-debug_script-medium (debug_script, medium): one test per semantic check.

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
    (APP / 'flint.txt').unlink(missing_ok=True)
    r = run(['bash', 'crystal.sh'])
    assert r.returncode == 0, r.stderr


def test_output_written():
    (APP / 'flint.txt').unlink(missing_ok=True)
    r = run(['bash', 'crystal.sh'])
    assert (APP / 'flint.txt').is_file()


def test_output_correct():
    (APP / 'flint.txt').unlink(missing_ok=True)
    r = run(['bash', 'crystal.sh'])
    assert read('flint.txt') == '1: apple delta forest winter\n2: garden valley violet orchid\n3: salt valley desert hazel\n4: maple indigo falcon apple crystal\n5: oak lantern\n6: lotus coral zephyr garnet\n'


def test_line_count():
    (APP / 'flint.txt').unlink(missing_ok=True)
    run(['bash', 'crystal.sh'])
    assert len(lines('flint.txt')) == 6


def test_reads_input_file():
    assert 'quill_cable.txt' in read('crystal.sh')
