"""Protected checks for task core-002-file_ops-easy (file_ops, easy): one test per semantic check.

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


def test_target_exists():
    assert (APP / 'ember_topaz.txt').is_file()


def test_target_content():
    assert read('ember_topaz.txt') == 'violet reef lotus birch\n'


def test_source_gone():
    assert not (APP / 'cedar_sky.txt').exists()


def test_other_file_untouched():
    assert read('cable_candle.md') == '# slate sage\nkeep this file as it is\n'
