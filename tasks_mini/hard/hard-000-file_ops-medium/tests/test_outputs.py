"""Protected checks for task hard-000-file_ops-medium (file_ops, medium): one test per semantic check.

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


def test_dir_exists():
    assert (APP / 'frost').is_dir()


def test_file1_content():
    assert read('frost/island.txt').strip() == 'pine cedar garnet'


def test_file2_content():
    assert read('frost/cedar.txt').strip() == 'summit quill meadow'


def test_only_two_files():
    assert sorted(x.name for x in (APP / 'frost').iterdir()) == ['cedar.txt', 'island.txt']


def test_other_file_untouched():
    assert read('basil_garnet.md') == '# crystal forest\nkeep this file as it is\n'
