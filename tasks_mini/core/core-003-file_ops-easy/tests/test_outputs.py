"""Protected checks for task core-003-file_ops-easy (file_ops, easy): one test per semantic check.

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
    assert (APP / 'topaz_dir').is_dir()


def test_file_exists():
    assert (APP / 'topaz_dir' / 'tide_border.log').is_file()


def test_file_is_empty():
    assert (APP / 'topaz_dir' / 'tide_border.log').stat().st_size == 0


def test_other_file_untouched():
    assert read('silver_quill.md') == '# granite nickel\nkeep this file as it is\n'
