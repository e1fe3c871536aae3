"""Protected checks for task multi-010-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_dir_exists():
    assert (APP / 'step1/raven').is_dir()


def test_step1_file1_content():
    assert read('step1/raven/galaxy.txt').strip() == 'cotton violet willow'


def test_step1_file2_content():
    assert read('step1/raven/crystal.txt').strip() == 'north meadow cable'


def test_step1_only_two_files():
    assert sorted(x.name for x in (APP / 'step1/raven').iterdir()) == ['crystal.txt', 'galaxy.txt']


def test_step1_other_file_untouched():
    assert read('step1/hazel_ivory.md') == '# mirror garden\nkeep this file as it is\n'


def test_step2_script_exists():
    assert (APP / 'step2/atlas.sh').is_file()


def test_step2_script_executable():
    import os
    assert os.access(APP / 'step2/atlas.sh', os.X_OK)


def test_step2_greets_first_name():
    assert run(['bash', 'step2/atlas.sh', 'alice']).stdout.strip() == 'Hi, alice!'


def test_step2_greets_other_name():
    assert run(['bash', 'step2/atlas.sh', 'yusuf']).stdout.strip() == 'Hi, yusuf!'
