"""Protected checks for task core-004-file_ops-medium (file_ops, medium): one test per semantic check.

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
    assert (APP / 'robin').is_dir()


def test_file1_content():
    assert read('robin/field.txt').strip() == 'tundra hazel horizon'


def test_file2_content():
    assert read('robin/tundra.txt').strip() == 'spark cable violet'


def test_only_two_files():
    assert sorted(x.name for x in (APP / 'robin').iterdir()) == ['field.txt', 'tundra.txt']


def test_other_file_untouched():
    assert read('onyx_pebble.md') == '# ridge anchor\nkeep this file as it is\n'
