"""Protected checks for task hard-005-text_processing-medium (text_processing, medium): one test per semantic check.

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
    assert (APP / 'forest_lagoon.txt').is_file()


def test_line_count():
    assert len(lines('forest_lagoon.txt')) == 10


def test_first_line():
    assert lines('forest_lagoon.txt')[:1] == ['atlas']


def test_content_exact():
    assert read('forest_lagoon.txt') == 'atlas\nbasil\nbasil\ncedar\ndesert\ncotton\nflint\namber\natlas\ncobalt\n'


def test_input_unchanged():
    assert read('anchor_juniper.txt') == 'cobalt\natlas\namber\nflint\ncotton\ndesert\ncedar\nbasil\nbasil\natlas\n'
