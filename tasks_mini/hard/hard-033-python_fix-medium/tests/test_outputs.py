"""Protected checks for task hard-033-python_fix-medium (python_fix, medium): one test per semantic check.

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
    spec = importlib.util.spec_from_file_location('m', APP / 'mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.solve_value)


def test_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_value(*([1, 2],)) == 1.5


def test_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_value(*([4, 4, 4],)) == 4.0


def test_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_value(*([1, 2, 3, 5],)) == 2.75
