"""Protected checks for task val-008-data_csv-medium (data_csv, medium): one test per semantic check.

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
    assert (APP / 'silver_birch.json').is_file()


def test_valid_json_list():
    assert isinstance(json.loads(read('silver_birch.json')), list)


def test_row_count():
    assert len(json.loads(read('silver_birch.json'))) == 9


def test_numbers_are_numbers():
    assert all(isinstance(r['points'], int) for r in json.loads(read('silver_birch.json')))


def test_content_exact():
    assert json.loads(read('silver_birch.json')) == [{'name': 'judy', 'city': 'cairo', 'points': 4}, {'name': 'frank', 'city': 'lima', 'points': 34}, {'name': 'trent', 'city': 'dakar', 'points': 68}, {'name': 'uma', 'city': 'delhi', 'points': 69}, {'name': 'quinn', 'city': 'delhi', 'points': 54}, {'name': 'karl', 'city': 'berlin', 'points': 53}, {'name': 'zoe', 'city': 'berlin', 'points': 54}, {'name': 'sybil', 'city': 'delhi', 'points': 46}, {'name': 'oscar', 'city': 'dakar', 'points': 9}]


def test_input_unchanged():
    assert read('silver_birch.csv') == 'name,city,points\njudy,cairo,4\nfrank,lima,34\ntrent,dakar,68\numa,delhi,69\nquinn,delhi,54\nkarl,berlin,53\nzoe,berlin,54\nsybil,delhi,46\noscar,dakar,9\n'
