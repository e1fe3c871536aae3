"""Protected checks for task multi-005-multi-medium (multi, medium): one test per semantic check.

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
    assert callable(m.helper_item)


def test_step1_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*(4,)) == True


def test_step1_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*(7,)) == False


def test_step1_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/lib.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*(0,)) == True


def test_step2_script_exists():
    assert (APP / 'step2/radar.sh').is_file()


def test_step2_script_executable():
    import os
    assert os.access(APP / 'step2/radar.sh', os.X_OK)


def test_step2_prints_message():
    r = run(['bash', 'step2/radar.sh'])
    assert r.stdout.strip() == 'bloom prism tundra'


def test_step2_exits_zero():
    assert run(['bash', 'step2/radar.sh']).returncode == 0


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1'])
