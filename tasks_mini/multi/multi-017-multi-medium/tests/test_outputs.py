"""Protected checks for task multi-017-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/planet.txt').is_file()


def test_step1_is_a_number():
    assert read('step1/planet.txt').strip().isdigit()


def test_step1_count_correct():
    assert int(read('step1/planet.txt')) == 0


def test_step1_log_unchanged():
    assert read('step1/access.log') == '2026-03-07T09:00:00 INFO 10.0.2.49 GET /stone 200\n2026-03-28T20:01:00 INFO 10.0.5.67 GET /ocean 200\n2026-03-26T08:02:00 WARN 10.0.5.67 GET /stone 500\n2026-03-22T05:03:00 WARN 10.0.5.67 GET /ocean 301\n2026-03-13T19:04:00 INFO 10.0.2.49 GET /galaxy 500\n2026-03-10T12:05:00 INFO 10.0.2.49 GET /canyon 200\n2026-03-15T03:06:00 INFO 10.0.5.67 GET /cobalt 500\n2026-03-11T19:07:00 INFO 10.0.2.49 GET /stone 200\n2026-03-20T20:08:00 INFO 10.0.2.49 GET /cobalt 404\n2026-03-03T15:09:00 INFO 10.0.2.49 GET /canyon 301\n2026-03-16T18:10:00 WARN 10.0.5.67 GET /ocean 404\n2026-03-01T06:11:00 INFO 10.0.2.49 GET /galaxy 200\n2026-03-01T15:12:00 INFO 10.0.5.67 GET /canyon 200\n2026-03-10T02:13:00 INFO 10.0.5.67 GET /galaxy 200\n2026-03-16T04:14:00 WARN 10.0.2.49 GET /canyon 200\n2026-03-01T03:15:00 INFO 10.0.8.109 GET /galaxy 200\n'


def test_step2_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.helper_data)


def test_step2_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*(28,)) == 140


def test_step2_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*(14,)) == 70


def test_step2_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_data(*(38,)) == 190


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
