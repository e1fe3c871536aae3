"""Protected checks for task core-006-text_processing-easy (text_processing, easy): one test per semantic check.

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
    assert (APP / 'sage_linen.txt').is_file()


def test_line_count():
    assert len(lines('sage_linen.txt')) == 2


def test_content_exact():
    assert read('sage_linen.txt') == 'granite ocean\ncobalt orchid flint nickel flint\n'


def test_input_unchanged():
    assert read('reef_dune.txt') == 'granite ocean\ncobalt orchid flint nickel flint\npepper storm lunar walnut cedar\npepper willow pepper radar jasmine\nsapphire coral anchor\n'
