"""Protected checks for task core-013-data_csv-easy (data_csv, easy): one test per semantic check.

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
    assert (APP / 'cipher.txt').is_file()


def test_is_a_number():
    assert read('cipher.txt').strip().isdigit()


def test_value_correct():
    assert read('cipher.txt').strip() == '56'


def test_input_unchanged():
    assert read('stone_pepper.csv') == 'name,city,amount\nnina,berlin,68\nwendy,delhi,36\nzoe,delhi,99\nrupert,lima,56\ndave,cairo,66\noscar,cairo,24\nxena,cairo,77\n'
