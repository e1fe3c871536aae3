"""Protected checks for task hard-008-data_csv-medium (data_csv, medium): one test per semantic check.

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
    assert (APP / 'orchid_river.json').is_file()


def test_valid_json_list():
    assert isinstance(json.loads(read('orchid_river.json')), list)


def test_row_count():
    assert len(json.loads(read('orchid_river.json'))) == 11


def test_numbers_are_numbers():
    assert all(isinstance(r['score'], int) for r in json.loads(read('orchid_river.json')))


def test_content_exact():
    assert json.loads(read('orchid_river.json')) == [{'name': 'nina', 'city': 'lima', 'score': 11}, {'name': 'carol', 'city': 'dakar', 'score': 1}, {'name': 'trent', 'city': 'dakar', 'score': 8}, {'name': 'erin', 'city': 'berlin', 'score': 34}, {'name': 'sybil', 'city': 'cairo', 'score': 33}, {'name': 'dave', 'city': 'dakar', 'score': 17}, {'name': 'victor', 'city': 'lima', 'score': 13}, {'name': 'oscar', 'city': 'cairo', 'score': 82}, {'name': 'quinn', 'city': 'lima', 'score': 21}, {'name': 'xena', 'city': 'berlin', 'score': 55}, {'name': 'mallory', 'city': 'lima', 'score': 99}]


def test_input_unchanged():
    assert read('orchid_river.csv') == 'name,city,score\nnina,lima,11\ncarol,dakar,1\ntrent,dakar,8\nerin,berlin,34\nsybil,cairo,33\ndave,dakar,17\nvictor,lima,13\noscar,cairo,82\nquinn,lima,21\nxena,berlin,55\nmallory,lima,99\n'
