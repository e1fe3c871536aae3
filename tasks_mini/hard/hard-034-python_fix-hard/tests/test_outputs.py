"""Protected checks for task hard-034-python_fix-hard (python_fix, hard): one test per semantic check.

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


def test_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.helper_value)


def test_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_value(*('45s',)) == 45


def test_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_value(*('1h30m',)) == 5400


def test_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_value(*('2m5s',)) == 125


def test_case_4():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_value(*('10h',)) == 36000


def test_case_5():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_value(*('1h1m1s',)) == 3661
