"""Protected checks for task hard-006-text_processing-hard (text_processing, hard): one test per semantic check.

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
    assert (APP / 'indigo_dawn.txt').is_file()


def test_three_lines():
    assert len(lines('indigo_dawn.txt')) == 3


def test_format_word_count():
    for line in lines('indigo_dawn.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_top_word():
    assert lines('indigo_dawn.txt')[0].split() == ['candle', '19']


def test_content_exact():
    assert read('indigo_dawn.txt') == 'candle 19\njade 18\nfern 14\n'
