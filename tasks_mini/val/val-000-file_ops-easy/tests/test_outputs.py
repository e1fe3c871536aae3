"""Protected checks for task val-000-file_ops-easy (file_ops, easy): one test per semantic check.

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


def test_file_exists():
    assert (APP / 'ivory_meadow.txt').is_file()


def test_content_matches():
    assert read('ivory_meadow.txt').strip() == 'iris river violet'


def test_other_file_untouched():
    assert read('copper_lunar.md') == '# meteor willow\nkeep this file as it is\n'
