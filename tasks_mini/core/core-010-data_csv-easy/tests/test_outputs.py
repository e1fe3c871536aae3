"""Protected checks for task core-010-data_csv-easy (data_csv, easy): one test per semantic check.

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
    assert (APP / 'lagoon.txt').is_file()


def test_is_a_number():
    assert read('lagoon.txt').strip().isdigit()


def test_value_correct():
    assert read('lagoon.txt').strip() == '11'


def test_input_unchanged():
    assert read('lotus_prism.csv') == 'name,city,points\nheidi,delhi,32\ngrace,dakar,27\nbob,cairo,17\numa,cairo,47\nsybil,delhi,67\nmallory,dakar,26\nalice,dakar,1\nwendy,cairo,11\n'
