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
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.helper_data)


def test_step1_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*('45s',)) == 45


def test_step1_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*('1h30m',)) == 5400


def test_step1_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*('2m5s',)) == 125


def test_step1_case_4():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*('10h',)) == 36000


def test_step1_case_5():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*('1h1m1s',)) == 3661


def test_step2_script_runs_cleanly():
    (APP / 'step2/lunar.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/crystal.sh'])
    assert r.returncode == 0, r.stderr


def test_step2_output_written():
    (APP / 'step2/lunar.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/crystal.sh'])
    assert (APP / 'step2/lunar.txt').is_file()


def test_step2_output_correct():
    (APP / 'step2/lunar.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/crystal.sh'])
    assert read('step2/lunar.txt') == 'row 1: timber stone walnut\nrow 2: ridge saffron garden dawn badge\nrow 3: summit canyon reef\nrow 4: nickel cloud\nrow 5: desert bloom falcon raven\n'


def test_step2_line_count():
    (APP / 'step2/lunar.txt').unlink(missing_ok=True)
    run(['bash', 'step2/crystal.sh'])
    assert len(lines('step2/lunar.txt')) == 5


def test_step2_reads_input_file():
    assert 'badge_basil.txt' in read('step2/crystal.sh')


def test_step3_md_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'md').iterdir()) == ['carbon_crystal.md', 'cherry_delta.md', 'ridge_tundra.md']


def test_step3_csv_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'csv').iterdir()) == ['border_pine.csv', 'valley_jade.csv', 'violet_field.csv']


def test_step3_log_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'log').iterdir()) == ['glacier_tide.log', 'kettle_candle.log']


def test_step3_no_loose_files():
    assert not [x for x in (APP / 'step3/inbox').iterdir() if x.is_file()]


def test_step3_contents_intact():
    assert read('step3/inbox/md/carbon_crystal.md') == 'atlas sky border\n'
    assert read('step3/inbox/md/ridge_tundra.md') == 'timber mint polar\n'
    assert read('step3/inbox/md/cherry_delta.md') == 'field linen jasmine\n'
    assert read('step3/inbox/csv/valley_jade.csv') == 'orbit walnut forest\n'
    assert read('step3/inbox/csv/violet_field.csv') == 'cipher raven timber\n'
    assert read('step3/inbox/csv/border_pine.csv') == 'forest nickel carbon\n'
    assert read('step3/inbox/log/glacier_tide.log') == 'breeze falcon walnut\n'
    assert read('step3/inbox/log/kettle_candle.log') == 'echo arrow comet\n'


def test_step3_other_file_untouched():
    assert read('step3/maple_garden.md') == '# marble nebula\nkeep this file as it is\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
