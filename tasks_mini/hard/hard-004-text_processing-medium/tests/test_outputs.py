"""Protected checks for task hard-004-text_processing-medium (text_processing, medium): one test per semantic check.

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
    assert (APP / 'cable_lunar.txt').is_file()


def test_line_count():
    assert len(lines('cable_lunar.txt')) == 11


def test_first_line():
    assert lines('cable_lunar.txt')[:1] == ['dawn']


def test_content_exact():
    assert read('cable_lunar.txt') == 'dawn\nfalcon\ncanyon\nbreeze\ncedar\ndesert\nbloom\nfalcon\namber\napple\napple\n'


def test_input_unchanged():
    assert read('iris_carbon.txt') == 'apple\napple\namber\nfalcon\nbloom\ndesert\ncedar\nbreeze\ncanyon\nfalcon\ndawn\n'
