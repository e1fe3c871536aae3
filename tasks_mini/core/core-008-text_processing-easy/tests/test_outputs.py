"""Protected checks for task core-008-text_processing-easy (text_processing, easy): one test per semantic check.

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
    assert (APP / 'jasmine_sky.txt').is_file()


def test_line_count():
    assert len(lines('jasmine_sky.txt')) == 3


def test_content_exact():
    assert read('jasmine_sky.txt') == 'arrow tulip forest stone birch\nstorm cobalt forest falcon olive\nvalley robin solar flint garnet\n'


def test_input_unchanged():
    assert read('ember_reef.txt') == 'arrow tulip forest stone birch\nstorm cobalt forest falcon olive\nvalley robin solar flint garnet\npebble crystal spark sky birch prism\nlotus fern garnet lagoon\n'
