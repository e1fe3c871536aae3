"""Protected checks for task hard-021-debug_script-medium (debug_script, medium): one test per semantic check.

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
    (APP / 'jasmine.txt').unlink(missing_ok=True)
    r = run(['bash', 'anchor.sh'])
    assert r.returncode == 0, r.stderr


def test_output_written():
    (APP / 'jasmine.txt').unlink(missing_ok=True)
    r = run(['bash', 'anchor.sh'])
    assert (APP / 'jasmine.txt').is_file()


def test_output_correct():
    (APP / 'jasmine.txt').unlink(missing_ok=True)
    r = run(['bash', 'anchor.sh'])
    assert read('jasmine.txt') == '1: ember meadow fern walnut zephyr lemon\n2: planet raven cipher\n3: desert island echo radar\n4: field horizon zephyr candle\n5: meadow quill cobalt dawn\n'


def test_line_count():
    (APP / 'jasmine.txt').unlink(missing_ok=True)
    run(['bash', 'anchor.sh'])
    assert len(lines('jasmine.txt')) == 5


def test_reads_input_file():
    assert 'indigo_bloom.txt' in read('anchor.sh')
