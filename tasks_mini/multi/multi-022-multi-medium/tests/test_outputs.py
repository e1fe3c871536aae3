"""Protected checks for task multi-022-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_output_exists():
    assert (APP / 'step1/radar_lunar.json').is_file()


def test_step1_valid_json_list():
    assert isinstance(json.loads(read('step1/radar_lunar.json')), list)


def test_step1_row_count():
    assert len(json.loads(read('step1/radar_lunar.json'))) == 14


def test_step1_numbers_are_numbers():
    assert all(isinstance(r['score'], int) for r in json.loads(read('step1/radar_lunar.json')))


def test_step1_content_exact():
    assert json.loads(read('step1/radar_lunar.json')) == [{'name': 'uma', 'city': 'cairo', 'score': 81}, {'name': 'judy', 'city': 'berlin', 'score': 53}, {'name': 'trent', 'city': 'berlin', 'score': 69}, {'name': 'bob', 'city': 'lima', 'score': 56}, {'name': 'zoe', 'city': 'berlin', 'score': 59}, {'name': 'grace', 'city': 'delhi', 'score': 47}, {'name': 'victor', 'city': 'berlin', 'score': 15}, {'name': 'heidi', 'city': 'delhi', 'score': 18}, {'name': 'ivan', 'city': 'berlin', 'score': 41}, {'name': 'frank', 'city': 'lima', 'score': 59}, {'name': 'liam', 'city': 'berlin', 'score': 6}, {'name': 'xena', 'city': 'cairo', 'score': 83}, {'name': 'rupert', 'city': 'cairo', 'score': 66}, {'name': 'carol', 'city': 'dakar', 'score': 3}]


def test_step1_input_unchanged():
    assert read('step1/radar_lunar.csv') == 'name,city,score\numa,cairo,81\njudy,berlin,53\ntrent,berlin,69\nbob,lima,56\nzoe,berlin,59\ngrace,delhi,47\nvictor,berlin,15\nheidi,delhi,18\nivan,berlin,41\nfrank,lima,59\nliam,berlin,6\nxena,cairo,83\nrupert,cairo,66\ncarol,dakar,3\n'


def test_step2_output_exists():
    assert (APP / 'step2/beacon.txt').is_file()


def test_step2_is_a_number():
    assert read('step2/beacon.txt').strip().isdigit()


def test_step2_count_correct():
    assert int(read('step2/beacon.txt')) == 5


def test_step2_log_unchanged():
    assert read('step2/server.log') == '2026-03-07T18:00:00 ERROR 10.0.6.161 GET /indigo 200\n2026-03-15T10:01:00 ERROR 10.0.0.149 GET /zephyr 200\n2026-03-26T05:02:00 ERROR 10.0.0.149 GET /indigo 200\n2026-03-04T14:03:00 INFO 10.0.6.161 GET /frost 404\n2026-03-13T02:04:00 INFO 10.0.6.161 GET /indigo 500\n2026-03-21T23:05:00 INFO 10.0.6.161 GET /indigo 200\n2026-03-18T01:06:00 WARN 10.0.0.149 GET /frost 200\n2026-03-17T20:07:00 ERROR 10.0.6.161 GET /beacon 301\n2026-03-18T22:08:00 WARN 10.0.0.149 GET /galaxy 200\n2026-03-05T10:09:00 INFO 10.0.6.161 GET /galaxy 404\n2026-03-23T15:10:00 INFO 10.0.4.222 GET /indigo 200\n2026-03-08T05:11:00 INFO 10.0.6.161 GET /frost 500\n2026-03-16T15:12:00 INFO 10.0.6.161 GET /indigo 200\n2026-03-24T21:13:00 ERROR 10.0.4.222 GET /galaxy 200\n'
