"""Protected checks for task hard-007-text_processing-hard (text_processing, hard): one test per semantic check.

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
    assert (APP / 'tundra_badge.txt').is_file()


def test_three_lines():
    assert len(lines('tundra_badge.txt')) == 3


def test_format_word_count():
    for line in lines('tundra_badge.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_top_word():
    assert lines('tundra_badge.txt')[0].split() == ['willow', '20']


def test_content_exact():
    assert read('tundra_badge.txt') == 'willow 20\nocean 16\ntimber 9\n'
