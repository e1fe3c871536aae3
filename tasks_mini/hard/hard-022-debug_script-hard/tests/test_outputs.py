"""Protected checks for task hard-022-debug_script-hard (debug_script, hard): one test per semantic check.

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
    (APP / 'breeze.txt').unlink(missing_ok=True)
    r = run(['bash', 'spark.sh'])
    assert r.returncode == 0, r.stderr


def test_output_written():
    (APP / 'breeze.txt').unlink(missing_ok=True)
    r = run(['bash', 'spark.sh'])
    assert (APP / 'breeze.txt').is_file()


def test_output_correct():
    (APP / 'breeze.txt').unlink(missing_ok=True)
    r = run(['bash', 'spark.sh'])
    assert read('breeze.txt') == 'part 1: orchid marble quartz kettle copper\npart 2: delta basil apple flint oak storm\npart 3: maple willow salt cherry candle\npart 4: robin maple\npart 5: ocean linen frost cobalt indigo\n'


def test_line_count():
    (APP / 'breeze.txt').unlink(missing_ok=True)
    run(['bash', 'spark.sh'])
    assert len(lines('breeze.txt')) == 5


def test_reads_input_file():
    assert 'salt_sapphire.txt' in read('spark.sh')
