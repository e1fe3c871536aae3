"""Protected checks for task core-005-text_processing-easy (text_processing, easy): one test per semantic check.

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


def test_old_word_gone():
    assert 'topaz' not in read('kettle_nebula.txt').split()


def test_new_word_count():
    assert read('kettle_nebula.txt').split().count('cable') == 2


def test_rest_unchanged():
    assert read('kettle_nebula.txt') == 'cable kettle breeze cobalt valley\nborder ivory cipher cable\ncopper copper tundra flint tundra indigo\npepper copper\nfern meadow olive jasmine delta prism\ncedar winter moss\n'
