"""Protected checks for task multi-011-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_script_runs_cleanly():
    (APP / 'step1/jasmine.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/badge.sh'])
    assert r.returncode == 0, r.stderr


def test_step1_output_written():
    (APP / 'step1/jasmine.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/badge.sh'])
    assert (APP / 'step1/jasmine.txt').is_file()


def test_step1_output_correct():
    (APP / 'step1/jasmine.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/badge.sh'])
    assert read('step1/jasmine.txt') == 'ember quartz pebble\n'


def test_step2_file_exists():
    assert (APP / 'step2/canyon_tundra.txt').is_file()


def test_step2_content_matches():
    assert read('step2/canyon_tundra.txt').strip() == 'dawn echo prism'


def test_step2_other_file_untouched():
    assert read('step2/slate_prism.md') == '# lunar planet\nkeep this file as it is\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
