"""Protected checks for task val-017-debug_script-medium (debug_script, medium): one test per semantic check.

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
    (APP / 'kettle.txt').unlink(missing_ok=True)
    r = run(['bash', 'galaxy.sh'])
    assert r.returncode == 0, r.stderr


def test_output_written():
    (APP / 'kettle.txt').unlink(missing_ok=True)
    r = run(['bash', 'galaxy.sh'])
    assert (APP / 'kettle.txt').is_file()


def test_output_correct():
    (APP / 'kettle.txt').unlink(missing_ok=True)
    r = run(['bash', 'galaxy.sh'])
    assert read('kettle.txt') == '1: pepper moss\n2: amber ridge tulip\n3: cherry bloom galaxy orbit olive\n4: cedar river bloom\n5: quartz indigo kettle\n6: shadow lunar\n7: meadow robin pine\n'


def test_line_count():
    (APP / 'kettle.txt').unlink(missing_ok=True)
    run(['bash', 'galaxy.sh'])
    assert len(lines('kettle.txt')) == 7


def test_reads_input_file():
    assert 'basil_ember.txt' in read('galaxy.sh')
