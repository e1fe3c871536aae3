"""Protected checks for task extreme-019-extreme-extreme (extreme, extreme): one test per semantic check.

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
    assert (APP / 'step1/ridge.txt').is_file()


def test_step1_three_lines():
    assert len(lines('step1/ridge.txt')) == 3


def test_step1_top_path():
    assert lines('step1/ridge.txt')[0].split() == ['13', '/raven']


def test_step1_ranking_exact():
    assert [l.split() for l in lines('step1/ridge.txt')] == [['13', '/raven'], ['13', '/walnut'], ['8', '/lotus']]


def test_step1_hours_file_exists():
    assert (APP / 'step1/errors_by_hour.txt').is_file()


def test_step1_hours_exact():
    assert read('step1/errors_by_hour.txt') == '04 1\n05 1\n06 1\n10 2\n13 1\n17 1\n'


def test_step1_log_unchanged():
    assert read('step1/server.log') == '2026-03-22T23:00:00 INFO 10.0.2.123 GET /walnut 404\n2026-03-02T21:01:00 INFO 10.0.9.153 GET /lotus 404\n2026-03-14T19:02:00 WARN 10.0.2.123 GET /lotus 200\n2026-03-24T02:03:00 INFO 10.0.5.212 GET /lotus 500\n2026-03-18T07:04:00 INFO 10.0.5.212 GET /arrow 200\n2026-03-08T13:05:00 INFO 10.0.1.230 GET /lotus 301\n2026-03-08T08:06:00 INFO 10.0.2.241 GET /arrow 200\n2026-03-07T00:07:00 INFO 10.0.5.212 GET /lotus 200\n2026-03-22T16:08:00 WARN 10.0.2.123 GET /lotus 200\n2026-03-02T13:09:00 INFO 10.0.1.230 GET /quartz 200\n2026-03-12T05:10:00 ERROR 10.0.5.212 GET /walnut 200\n2026-03-22T00:11:00 INFO 10.0.2.241 GET /quartz 500\n2026-03-10T00:12:00 INFO 10.0.2.241 GET /raven 200\n2026-03-25T15:13:00 INFO 10.0.2.241 GET /raven 200\n2026-03-20T09:14:00 WARN 10.0.1.230 GET /arrow 500\n2026-03-26T08:15:00 INFO 10.0.5.212 GET /walnut 200\n2026-03-11T13:16:00 ERROR 10.0.2.241 GET /arrow 500\n2026-03-24T06:17:00 INFO 10.0.9.153 GET /walnut 404\n2026-03-01T21:18:00 INFO 10.0.0.106 GET /lotus 200\n2026-03-06T11:19:00 INFO 10.0.2.241 GET /raven 200\n2026-03-22T01:20:00 WARN 10.0.5.212 GET /raven 500\n2026-03-02T01:21:00 WARN 10.0.1.230 GET /raven 200\n2026-03-15T05:22:00 INFO 10.0.0.106 GET /raven 200\n2026-03-28T04:23:00 ERROR 10.0.9.153 GET /raven 200\n2026-03-13T20:24:00 WARN 10.0.2.123 GET /raven 200\n2026-03-23T02:25:00 WARN 10.0.2.241 GET /walnut 500\n2026-03-19T03:26:00 INFO 10.0.9.153 GET /walnut 404\n2026-03-13T01:27:00 WARN 10.0.9.153 GET /lotus 200\n2026-03-16T10:28:00 ERROR 10.0.1.230 GET /walnut 200\n2026-03-19T14:29:00 WARN 10.0.9.153 GET /walnut 200\n2026-03-11T21:30:00 WARN 10.0.5.212 GET /walnut 200\n2026-03-26T16:31:00 INFO 10.0.2.241 GET /raven 500\n2026-03-02T15:32:00 INFO 10.0.1.230 GET /raven 301\n2026-03-05T08:33:00 INFO 10.0.1.230 GET /walnut 500\n2026-03-02T10:34:00 ERROR 10.0.1.230 GET /quartz 200\n2026-03-28T13:35:00 INFO 10.0.2.241 GET /arrow 200\n2026-03-06T06:36:00 ERROR 10.0.2.241 GET /walnut 404\n2026-03-01T17:37:00 ERROR 10.0.2.241 GET /walnut 301\n2026-03-15T06:38:00 WARN 10.0.2.123 GET /raven 404\n2026-03-08T06:39:00 INFO 10.0.1.230 GET /quartz 404\n2026-03-12T10:40:00 INFO 10.0.1.230 GET /raven 200\n2026-03-23T08:41:00 INFO 10.0.2.123 GET /raven 200\n2026-03-16T07:42:00 INFO 10.0.5.212 GET /arrow 301\n2026-03-12T15:43:00 INFO 10.0.0.106 GET /walnut 301\n2026-03-03T15:44:00 INFO 10.0.1.230 GET /quartz 301\n'


def test_step2_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/utils.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.helper_item)


def test_step2_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/utils.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*('45s',)) == 45


def test_step2_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/utils.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*('1h30m',)) == 5400


def test_step2_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/utils.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*('2m5s',)) == 125


def test_step2_case_4():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/utils.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*('10h',)) == 36000


def test_step2_case_5():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/utils.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.helper_item(*('1h1m1s',)) == 3661


def test_step3_output_exists():
    assert (APP / 'step3/cable_sage.txt').is_file()


def test_step3_three_lines():
    assert len(lines('step3/cable_sage.txt')) == 3


def test_step3_format_word_count():
    for line in lines('step3/cable_sage.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step3_top_word():
    assert lines('step3/cable_sage.txt')[0].split() == ['cipher', '19']


def test_step3_content_exact():
    assert read('step3/cable_sage.txt') == 'cipher 19\ncarbon 18\nriver 8\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
