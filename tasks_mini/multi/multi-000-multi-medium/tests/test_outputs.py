"""Protected checks for task multi-000-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/cotton_kettle.json').is_file()


def test_step1_valid_json_list():
    assert isinstance(json.loads(read('step1/cotton_kettle.json')), list)


def test_step1_row_count():
    assert len(json.loads(read('step1/cotton_kettle.json'))) == 12


def test_step1_numbers_are_numbers():
    assert all(isinstance(r['points'], int) for r in json.loads(read('step1/cotton_kettle.json')))


def test_step1_content_exact():
    assert json.loads(read('step1/cotton_kettle.json')) == [{'name': 'victor', 'city': 'lima', 'points': 2}, {'name': 'quinn', 'city': 'berlin', 'points': 59}, {'name': 'trent', 'city': 'cairo', 'points': 72}, {'name': 'grace', 'city': 'dakar', 'points': 46}, {'name': 'frank', 'city': 'berlin', 'points': 72}, {'name': 'zoe', 'city': 'berlin', 'points': 33}, {'name': 'nina', 'city': 'dakar', 'points': 62}, {'name': 'oscar', 'city': 'dakar', 'points': 24}, {'name': 'wendy', 'city': 'cairo', 'points': 58}, {'name': 'yusuf', 'city': 'delhi', 'points': 81}, {'name': 'carol', 'city': 'cairo', 'points': 26}, {'name': 'heidi', 'city': 'berlin', 'points': 46}]


def test_step1_input_unchanged():
    assert read('step1/cotton_kettle.csv') == 'name,city,points\nvictor,lima,2\nquinn,berlin,59\ntrent,cairo,72\ngrace,dakar,46\nfrank,berlin,72\nzoe,berlin,33\nnina,dakar,62\noscar,dakar,24\nwendy,cairo,58\nyusuf,delhi,81\ncarol,cairo,26\nheidi,berlin,46\n'


def test_step2_script_exists():
    assert (APP / 'step2/comet.sh').is_file()


def test_step2_script_executable():
    import os
    assert os.access(APP / 'step2/comet.sh', os.X_OK)


def test_step2_greets_first_name():
    assert run(['bash', 'step2/comet.sh', 'heidi']).stdout.strip() == 'Hi, heidi!'


def test_step2_greets_other_name():
    assert run(['bash', 'step2/comet.sh', 'zoe']).stdout.strip() == 'Hi, zoe!'
