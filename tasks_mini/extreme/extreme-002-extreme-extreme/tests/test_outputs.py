"""Protected checks for task extreme-002-extreme-extreme (extreme, extreme): one test per semantic check.

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
    assert (APP / 'step1/robin_juniper.txt').is_file()


def test_step1_three_lines():
    assert len(lines('step1/robin_juniper.txt')) == 3


def test_step1_format_word_count():
    for line in lines('step1/robin_juniper.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step1_top_word():
    assert lines('step1/robin_juniper.txt')[0].split() == ['storm', '21']


def test_step1_content_exact():
    assert read('step1/robin_juniper.txt') == 'storm 21\npine 14\nborder 9\n'


def test_step2_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.solve_result)


def test_step2_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*(['a', 'b', 'a'],)) == {'a': 2, 'b': 1}


def test_step2_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*(['X', 'x'],)) == {'x': 2}


def test_step2_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*([],)) == {}


def test_step2_case_4():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*(['Hi'],)) == {'hi': 1}


def test_step3_csv_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'csv').iterdir()) == ['field_lotus.csv', 'meteor_fern.csv', 'shadow_pebble.csv']


def test_step3_log_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'log').iterdir()) == ['orbit_topaz.log', 'summit_hazel.log']


def test_step3_txt_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'txt').iterdir()) == ['cedar_pebble.txt', 'cobalt_iris.txt', 'solar_ridge.txt']


def test_step3_no_loose_files():
    assert not [x for x in (APP / 'step3/inbox').iterdir() if x.is_file()]


def test_step3_contents_intact():
    assert read('step3/inbox/csv/meteor_fern.csv') == 'dune birch carbon\n'
    assert read('step3/inbox/csv/shadow_pebble.csv') == 'silver delta cipher\n'
    assert read('step3/inbox/csv/field_lotus.csv') == 'jasmine arrow echo\n'
    assert read('step3/inbox/log/orbit_topaz.log') == 'ivory harbor dawn\n'
    assert read('step3/inbox/log/summit_hazel.log') == 'zephyr canyon badge\n'
    assert read('step3/inbox/txt/cobalt_iris.txt') == 'glacier carbon meadow\n'
    assert read('step3/inbox/txt/solar_ridge.txt') == 'badge delta sky\n'
    assert read('step3/inbox/txt/cedar_pebble.txt') == 'indigo silver reef\n'


def test_step3_other_file_untouched():
    assert read('step3/nickel_pepper.md') == '# basil juniper\nkeep this file as it is\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
