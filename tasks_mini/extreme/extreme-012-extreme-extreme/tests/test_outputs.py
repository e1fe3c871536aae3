"""Protected checks for task extreme-012-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_script_runs_cleanly():
    (APP / 'step1/north.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/cherry.sh'])
    assert r.returncode == 0, r.stderr


def test_step1_output_written():
    (APP / 'step1/north.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/cherry.sh'])
    assert (APP / 'step1/north.txt').is_file()


def test_step1_output_correct():
    (APP / 'step1/north.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/cherry.sh'])
    assert read('step1/north.txt') == 'part 1: candle shadow forest\npart 2: dune slate echo salt\npart 3: tundra lunar dune kettle willow apple\npart 4: beacon falcon\npart 5: island sky planet velvet marble lunar\npart 6: anchor timber cherry raven\npart 7: frost planet orchid topaz hazel\n'


def test_step1_line_count():
    (APP / 'step1/north.txt').unlink(missing_ok=True)
    run(['bash', 'step1/cherry.sh'])
    assert len(lines('step1/north.txt')) == 7


def test_step1_reads_input_file():
    assert 'mint_tundra.txt' in read('step1/cherry.sh')


def test_step2_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.calc_value)


def test_step2_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_value(*([2.78, 8.44, 7.75],)) == 22.76


def test_step2_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_value(*([],)) == 0


def test_step2_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_value(*([70],)) == 84.0


def test_step3_script_exists():
    assert (APP / 'step3/falcon.sh').is_file()


def test_step3_script_executable():
    import os
    assert os.access(APP / 'step3/falcon.sh', os.X_OK)


def test_step3_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('tide pine planet solar harbor desert\ncobalt zephyr tulip plum\nlemon garden ocean harbor garnet anchor\ngarnet reef\ngarden birch nebula breeze moss\nsummit moss cloud tulip\nember glacier\n')
    assert run(['bash', 'step3/falcon.sh', f.name]).stdout.strip() == 'lemon garden ocean harbor garnet anchor'


def test_step3_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('border sky stone tulip anchor\napple marble solar maple\nridge tundra\nbirch border winter cipher\nquill marble crystal border\nslate harbor forest willow badge\npine shadow\nmoss ivory apple\n')
    assert run(['bash', 'step3/falcon.sh', f.name]).stdout.strip() == 'slate harbor forest willow badge'


def test_step3_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('spruce planet quartz tundra\ncobalt ocean pebble slate quartz walnut\n\n\ndawn lagoon\nfern cotton lotus storm pine river\n')
    assert run(['bash', 'step3/falcon.sh', f.name]).stdout.strip() == 'cobalt ocean pebble slate quartz walnut'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
