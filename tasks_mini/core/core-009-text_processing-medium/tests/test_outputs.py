"""Protected checks for task core-009-text_processing-medium (text_processing, medium): one test per semantic check.

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
    assert (APP / 'pine_nebula.txt').is_file()


def test_line_count():
    assert len(lines('pine_nebula.txt')) == 1


def test_first_line():
    assert lines('pine_nebula.txt')[:1] == ['zephyr valley mint desert linen']


def test_content_exact():
    assert read('pine_nebula.txt') == 'zephyr valley mint desert linen\n'


def test_input_unchanged():
    assert read('slate_field.txt') == 'cedar sapphire polar tundra lagoon desert\nhorizon orchid horizon meteor silver\nspruce desert ridge delta raven\nmeadow raven desert\ncandle granite\nzephyr valley mint desert linen\nborder winter cedar border\nborder granite ridge desert birch willow\n'
