"""Protected checks for task hard-009-data_csv-medium (data_csv, medium): one test per semantic check.

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
    assert (APP / 'ivory_plum.json').is_file()


def test_valid_json_list():
    assert isinstance(json.loads(read('ivory_plum.json')), list)


def test_row_count():
    assert len(json.loads(read('ivory_plum.json'))) == 10


def test_numbers_are_numbers():
    assert all(isinstance(r['points'], int) for r in json.loads(read('ivory_plum.json')))


def test_content_exact():
    assert json.loads(read('ivory_plum.json')) == [{'name': 'karl', 'city': 'delhi', 'points': 83}, {'name': 'mallory', 'city': 'berlin', 'points': 4}, {'name': 'wendy', 'city': 'berlin', 'points': 96}, {'name': 'liam', 'city': 'cairo', 'points': 24}, {'name': 'bob', 'city': 'berlin', 'points': 16}, {'name': 'alice', 'city': 'delhi', 'points': 92}, {'name': 'xena', 'city': 'dakar', 'points': 69}, {'name': 'dave', 'city': 'berlin', 'points': 56}, {'name': 'uma', 'city': 'delhi', 'points': 9}, {'name': 'carol', 'city': 'lima', 'points': 12}]


def test_input_unchanged():
    assert read('ivory_plum.csv') == 'name,city,points\nkarl,delhi,83\nmallory,berlin,4\nwendy,berlin,96\nliam,cairo,24\nbob,berlin,16\nalice,delhi,92\nxena,dakar,69\ndave,berlin,56\numa,delhi,9\ncarol,lima,12\n'
