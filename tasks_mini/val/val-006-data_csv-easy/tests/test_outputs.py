"""Protected checks for task val-006-data_csv-easy (data_csv, easy): one test per semantic check.

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
    assert (APP / 'maple.txt').is_file()


def test_is_a_number():
    assert read('maple.txt').strip().isdigit()


def test_value_correct():
    assert read('maple.txt').strip() == '48'


def test_input_unchanged():
    assert read('iris_ivory.csv') == 'name,city,points\nivan,dakar,90\nmallory,lima,10\nerin,lima,63\nxena,cairo,12\nnina,delhi,68\nwendy,berlin,8\nliam,berlin,48\ngrace,lima,9\n'
