"""Protected checks for task multi-020-multi-medium (multi, medium): one test per semantic check.

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
    (APP / 'step1/garden.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/linen.sh'])
    assert r.returncode == 0, r.stderr


def test_step1_output_written():
    (APP / 'step1/garden.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/linen.sh'])
    assert (APP / 'step1/garden.txt').is_file()


def test_step1_output_correct():
    (APP / 'step1/garden.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/linen.sh'])
    assert read('step1/garden.txt') == '1: basil quartz\n2: cipher quartz summit granite topaz candle\n3: silver sapphire moss frost\n4: falcon fern comet north\n5: arrow topaz stone quartz raven\n6: dune lemon pepper cobalt\n7: canyon linen lagoon willow\n'


def test_step1_line_count():
    (APP / 'step1/garden.txt').unlink(missing_ok=True)
    run(['bash', 'step1/linen.sh'])
    assert len(lines('step1/garden.txt')) == 7


def test_step1_reads_input_file():
    assert 'timber_willow.txt' in read('step1/linen.sh')


def test_step2_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.helper_result)


def test_step2_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_result(*(-9,)) == -72


def test_step2_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_result(*(10,)) == 80


def test_step2_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_result(*(35,)) == 280
