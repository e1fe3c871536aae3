"""Protected checks for task val-004-text_processing-easy (text_processing, easy): one test per semantic check.

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
    assert (APP / 'onyx_robin.txt').is_file()


def test_line_count():
    assert len(lines('onyx_robin.txt')) == 2


def test_content_exact():
    assert read('onyx_robin.txt') == 'garden copper desert topaz timber fern\nbloom onyx\n'


def test_input_unchanged():
    assert read('spruce_nebula.txt') == 'garden copper desert topaz timber fern\nbloom onyx\nvelvet plum\ngalaxy quartz cobalt cotton fern\npepper hazel hazel fern jasmine\nonyx pepper mirror sage topaz\n'
