"""Protected checks for task core-012-data_csv-easy (data_csv, easy): one test per semantic check.

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
    assert (APP / 'lotus.txt').is_file()


def test_is_a_number():
    assert read('lotus.txt').strip().isdigit()


def test_value_correct():
    assert read('lotus.txt').strip() == '7'


def test_input_unchanged():
    assert read('badge_delta.csv') == 'name,city,score\nmallory,dakar,76\nrupert,cairo,47\nwendy,dakar,79\ngrace,cairo,29\numa,dakar,31\ntrent,delhi,73\nquinn,dakar,51\n'
