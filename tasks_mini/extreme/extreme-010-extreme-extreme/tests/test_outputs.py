"""Protected checks for task extreme-010-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.helper_item)


def test_step1_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*(['a', 'b', 'a'],)) == {'a': 2, 'b': 1}


def test_step1_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*(['X', 'x'],)) == {'x': 2}


def test_step1_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*([],)) == {}


def test_step1_case_4():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*(['Hi'],)) == {'hi': 1}


def test_step2_valid_json():
    json.loads(read('step2/settings.json'))


def test_step2_workers_set():
    assert json.loads(read('step2/settings.json'))['limits']['workers'] == 298


def test_step2_feature_appended():
    assert json.loads(read('step2/settings.json'))['features'] == ['willow', 'bloom', 'spruce', 'ridge']


def test_step2_rest_unchanged():
    d = json.loads(read('step2/settings.json'))
    assert d['service'] == {'name': 'lagoon', 'port': 2996} and d['limits']['timeout'] == 163


def test_step3_output_exists():
    assert (APP / 'step3/summary.csv').is_file()


def test_step3_header():
    assert lines('step3/summary.csv')[0] == 'city,total_score'


def test_step3_one_row_per_city():
    assert len(lines('step3/summary.csv')) == 6


def test_step3_sorted_by_city():
    rows = [l.split(',')[0] for l in lines('step3/summary.csv')[1:]]
    assert rows == sorted(rows)


def test_step3_totals_correct():
    assert read('step3/summary.csv') == 'city,total_score\nberlin,238\ncairo,42\ndakar,200\ndelhi,98\nlima,155\n'


def test_step3_input_unchanged():
    assert read('step3/galaxy_flint.csv') == 'name,city,score\nfrank,lima,67\nerin,dakar,7\ngrace,berlin,37\nquinn,berlin,60\npeggy,berlin,56\nivan,lima,5\ntrent,dakar,95\nbob,cairo,30\nkarl,berlin,85\nrupert,delhi,98\nnina,cairo,12\nxena,dakar,14\nmallory,dakar,63\nwendy,lima,83\numa,dakar,8\nheidi,dakar,13\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
