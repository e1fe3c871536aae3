"""Protected checks for task val-005-text_processing-medium (text_processing, medium): one test per semantic check.

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


def test_output_exists():
    assert (APP / 'plum_lotus.txt').is_file()


def test_line_count():
    assert len(lines('plum_lotus.txt')) == 1


def test_first_line():
    assert lines('plum_lotus.txt')[:1] == ['fern bloom']


def test_content_exact():
    assert read('plum_lotus.txt') == 'fern bloom\n'


def test_input_unchanged():
    assert read('summit_stone.txt') == 'lotus jasmine silver\niris moss tundra\ngalaxy jade copper quartz linen birch\nradar forest\ncotton ridge reef pepper sage ocean\nfern bloom\ncedar solar maple\norchid badge crystal\npebble storm juniper atlas cobalt pepper\n'
