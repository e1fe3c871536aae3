"""Protected checks for task val-007-data_csv-easy (data_csv, easy): one test per semantic check.

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
    assert (APP / 'planet.txt').is_file()


def test_is_a_number():
    assert read('planet.txt').strip().isdigit()


def test_value_correct():
    assert read('planet.txt').strip() == '40'


def test_input_unchanged():
    assert read('coral_onyx.csv') == 'name,city,score\npeggy,berlin,76\ncarol,delhi,78\nquinn,delhi,47\nsybil,cairo,35\nheidi,delhi,40\nnina,cairo,40\nivan,lima,37\n'
