"""Protected checks for task core-011-data_csv-easy (data_csv, easy): one test per semantic check.

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
    assert (APP / 'pebble.txt').is_file()


def test_is_a_number():
    assert read('pebble.txt').strip().isdigit()


def test_value_correct():
    assert read('pebble.txt').strip() == '6'


def test_input_unchanged():
    assert read('violet_granite.csv') == 'name,city,points\npeggy,berlin,32\nfrank,cairo,66\nalice,cairo,55\nheidi,delhi,81\nquinn,lima,69\ngrace,lima,41\n'
