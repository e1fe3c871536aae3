"""Protected checks for task multi-015-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/pine.txt').is_file()


def test_step1_is_a_number():
    assert read('step1/pine.txt').strip().isdigit()


def test_step1_count_correct():
    assert int(read('step1/pine.txt')) == 2


def test_step1_log_unchanged():
    assert read('step1/web.log') == '2026-03-09T21:00:00 WARN 10.0.9.152 GET /cobalt 500\n2026-03-10T15:01:00 INFO 10.0.7.143 GET /cobalt 200\n2026-03-22T18:02:00 WARN 10.0.9.152 GET /badge 200\n2026-03-22T11:03:00 INFO 10.0.6.249 GET /badge 500\n2026-03-06T08:04:00 WARN 10.0.7.159 GET /nickel 301\n2026-03-04T00:05:00 WARN 10.0.9.152 GET /nickel 500\n2026-03-05T02:06:00 ERROR 10.0.6.249 GET /coral 200\n2026-03-06T17:07:00 ERROR 10.0.9.152 GET /cobalt 301\n2026-03-20T01:08:00 INFO 10.0.6.249 GET /nickel 404\n2026-03-06T16:09:00 INFO 10.0.9.152 GET /nickel 200\n2026-03-19T14:10:00 INFO 10.0.7.143 GET /desert 200\n2026-03-24T12:11:00 INFO 10.0.6.249 GET /coral 500\n2026-03-23T18:12:00 INFO 10.0.9.152 GET /coral 301\n2026-03-08T01:13:00 INFO 10.0.7.143 GET /coral 200\n2026-03-11T07:14:00 WARN 10.0.9.152 GET /desert 500\n2026-03-04T02:15:00 WARN 10.0.6.249 GET /desert 200\n2026-03-05T04:16:00 WARN 10.0.9.152 GET /desert 500\n'


def test_step2_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.calc_result)


def test_step2_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_result(*(2, 3)) == 5


def test_step2_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_result(*(-4, 9)) == 5


def test_step2_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_result(*(0, 0)) == 0


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
