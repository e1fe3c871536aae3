"""Protected checks for task val-003-text_processing-easy (text_processing, easy): one test per semantic check.

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
    assert (APP / 'field_polar.txt').is_file()


def test_line_count():
    assert len(lines('field_polar.txt')) == 3


def test_content_exact():
    assert read('field_polar.txt') == 'storm quartz timber tulip meadow\nivory mirror timber fern birch\nshadow slate garden spark delta\n'


def test_input_unchanged():
    assert read('prism_violet.txt') == 'storm quartz timber tulip meadow\nivory mirror timber fern birch\nshadow slate garden spark delta\ncoral marble reef\nisland field\n'
