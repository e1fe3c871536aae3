"""Protected checks for task multi-014-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_script_exists():
    assert (APP / 'step1/arrow.sh').is_file()


def test_step1_script_executable():
    import os
    assert os.access(APP / 'step1/arrow.sh', os.X_OK)


def test_step1_greets_first_name():
    assert run(['bash', 'step1/arrow.sh', 'liam']).stdout.strip() == 'Hi, liam!'


def test_step1_greets_other_name():
    assert run(['bash', 'step1/arrow.sh', 'xena']).stdout.strip() == 'Hi, xena!'


def test_step2_file_exists():
    assert (APP / 'step2/birch_apple.txt').is_file()


def test_step2_content_matches():
    assert read('step2/birch_apple.txt').strip() == 'crystal sky linen'


def test_step2_other_file_untouched():
    assert read('step2/coral_lotus.md') == '# desert pebble\nkeep this file as it is\n'
