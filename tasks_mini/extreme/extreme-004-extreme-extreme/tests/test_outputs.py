"""Protected checks for task extreme-004-extreme-extreme (extreme, extreme): one test per semantic check.

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
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.solve_item)


def test_step1_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_item(*(['a', 'b', 'a'],)) == {'a': 2, 'b': 1}


def test_step1_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_item(*(['X', 'x'],)) == {'x': 2}


def test_step1_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_item(*([],)) == {}


def test_step1_case_4():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_item(*(['Hi'],)) == {'hi': 1}


def test_step2_script_runs_cleanly():
    (APP / 'step2/comet.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/slate.sh'])
    assert r.returncode == 0, r.stderr


def test_step2_output_written():
    (APP / 'step2/comet.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/slate.sh'])
    assert (APP / 'step2/comet.txt').is_file()


def test_step2_output_correct():
    (APP / 'step2/comet.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/slate.sh'])
    assert read('step2/comet.txt') == 'item 1: arrow carbon\nitem 2: planet falcon\nitem 3: cable lagoon cedar polar\nitem 4: tide winter apple sky falcon copper\nitem 5: prism cipher solar\n'


def test_step2_line_count():
    (APP / 'step2/comet.txt').unlink(missing_ok=True)
    run(['bash', 'step2/slate.sh'])
    assert len(lines('step2/comet.txt')) == 5


def test_step2_reads_input_file():
    assert 'crystal_lunar.txt' in read('step2/slate.sh')


def test_step3_log_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'log').iterdir()) == ['echo_border.log', 'field_solar.log', 'zephyr_spark.log']


def test_step3_txt_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'txt').iterdir()) == ['indigo_delta.txt', 'maple_garden.txt', 'salt_candle.txt']


def test_step3_json_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'json').iterdir()) == ['carbon_crystal.json', 'cherry_delta.json', 'ridge_tundra.json']


def test_step3_no_loose_files():
    assert not [x for x in (APP / 'step3/inbox').iterdir() if x.is_file()]


def test_step3_contents_intact():
    assert read('step3/inbox/log/field_solar.log') == 'echo border ivory\n'
    assert read('step3/inbox/log/zephyr_spark.log') == 'salt walnut oak\n'
    assert read('step3/inbox/log/echo_border.log') == 'island iris garden\n'
    assert read('step3/inbox/txt/salt_candle.txt') == 'cedar border dawn\n'
    assert read('step3/inbox/txt/maple_garden.txt') == 'desert pepper orchid\n'
    assert read('step3/inbox/txt/indigo_delta.txt') == 'marble nebula willow\n'
    assert read('step3/inbox/json/carbon_crystal.json') == 'atlas sky border\n'
    assert read('step3/inbox/json/ridge_tundra.json') == 'timber mint polar\n'
    assert read('step3/inbox/json/cherry_delta.json') == 'field linen jasmine\n'


def test_step3_other_file_untouched():
    assert read('step3/carbon_summit.md') == '# sapphire arrow\nkeep this file as it is\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
