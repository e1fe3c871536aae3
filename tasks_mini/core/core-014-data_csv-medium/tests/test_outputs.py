"""Protected checks for task core-014-data_csv-medium (data_csv, medium): one test per semantic check.

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
    assert (APP / 'meteor_lantern.json').is_file()


def test_valid_json_list():
    assert isinstance(json.loads(read('meteor_lantern.json')), list)


def test_row_count():
    assert len(json.loads(read('meteor_lantern.json'))) == 14


def test_numbers_are_numbers():
    assert all(isinstance(r['score'], int) for r in json.loads(read('meteor_lantern.json')))


def test_content_exact():
    assert json.loads(read('meteor_lantern.json')) == [{'name': 'mallory', 'city': 'cairo', 'score': 82}, {'name': 'carol', 'city': 'cairo', 'score': 57}, {'name': 'victor', 'city': 'delhi', 'score': 47}, {'name': 'uma', 'city': 'cairo', 'score': 41}, {'name': 'ivan', 'city': 'delhi', 'score': 76}, {'name': 'xena', 'city': 'lima', 'score': 87}, {'name': 'frank', 'city': 'dakar', 'score': 74}, {'name': 'trent', 'city': 'delhi', 'score': 7}, {'name': 'bob', 'city': 'cairo', 'score': 71}, {'name': 'zoe', 'city': 'lima', 'score': 54}, {'name': 'dave', 'city': 'delhi', 'score': 88}, {'name': 'karl', 'city': 'lima', 'score': 32}, {'name': 'rupert', 'city': 'lima', 'score': 13}, {'name': 'judy', 'city': 'delhi', 'score': 4}]


def test_input_unchanged():
    assert read('meteor_lantern.csv') == 'name,city,score\nmallory,cairo,82\ncarol,cairo,57\nvictor,delhi,47\numa,cairo,41\nivan,delhi,76\nxena,lima,87\nfrank,dakar,74\ntrent,delhi,7\nbob,cairo,71\nzoe,lima,54\ndave,delhi,88\nkarl,lima,32\nrupert,lima,13\njudy,delhi,4\n'
