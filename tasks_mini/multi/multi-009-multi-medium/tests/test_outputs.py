"""Protected checks for task multi-009-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_target_exists():
    assert (APP / 'step1/lunar_pepper.txt').is_file()


def test_step1_target_content():
    assert read('step1/lunar_pepper.txt') == 'raven winter tundra crystal\n'


def test_step1_source_gone():
    assert not (APP / 'step1/lemon_walnut.txt').exists()


def test_step1_other_file_untouched():
    assert read('step1/cedar_beacon.md') == '# juniper pebble\nkeep this file as it is\n'


def test_step2_output_exists():
    assert (APP / 'step2/plum_dune.json').is_file()


def test_step2_valid_json_list():
    assert isinstance(json.loads(read('step2/plum_dune.json')), list)


def test_step2_row_count():
    assert len(json.loads(read('step2/plum_dune.json'))) == 9


def test_step2_numbers_are_numbers():
    assert all(isinstance(r['score'], int) for r in json.loads(read('step2/plum_dune.json')))


def test_step2_content_exact():
    assert json.loads(read('step2/plum_dune.json')) == [{'name': 'quinn', 'city': 'delhi', 'score': 10}, {'name': 'alice', 'city': 'delhi', 'score': 40}, {'name': 'bob', 'city': 'cairo', 'score': 98}, {'name': 'uma', 'city': 'berlin', 'score': 90}, {'name': 'victor', 'city': 'delhi', 'score': 79}, {'name': 'mallory', 'city': 'lima', 'score': 71}, {'name': 'judy', 'city': 'cairo', 'score': 27}, {'name': 'carol', 'city': 'berlin', 'score': 86}, {'name': 'wendy', 'city': 'berlin', 'score': 39}]


def test_step2_input_unchanged():
    assert read('step2/plum_dune.csv') == 'name,city,score\nquinn,delhi,10\nalice,delhi,40\nbob,cairo,98\numa,berlin,90\nvictor,delhi,79\nmallory,lima,71\njudy,cairo,27\ncarol,berlin,86\nwendy,berlin,39\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
