"""Protected checks for task extreme-018-extreme-extreme (extreme, extreme): one test per semantic check.

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
    assert (APP / 'step1/juniper.txt').is_file()


def test_step1_three_lines():
    assert len(lines('step1/juniper.txt')) == 3


def test_step1_top_path():
    assert lines('step1/juniper.txt')[0].split() == ['10', '/breeze']


def test_step1_ranking_exact():
    assert [l.split() for l in lines('step1/juniper.txt')] == [['10', '/breeze'], ['9', '/quartz'], ['7', '/sky']]


def test_step1_hours_file_exists():
    assert (APP / 'step1/errors_by_hour.txt').is_file()


def test_step1_hours_exact():
    assert read('step1/errors_by_hour.txt') == '00 1\n03 1\n07 3\n13 2\n17 1\n20 1\n21 2\n23 1\n'


def test_step1_log_unchanged():
    assert read('step1/server.log') == '2026-03-11T04:00:00 INFO 10.0.5.237 GET /breeze 200\n2026-03-14T00:01:00 ERROR 10.0.1.20 GET /sky 301\n2026-03-19T10:02:00 INFO 10.0.5.211 GET /quartz 200\n2026-03-18T17:03:00 ERROR 10.0.1.20 GET /breeze 500\n2026-03-28T21:04:00 WARN 10.0.1.20 GET /salt 404\n2026-03-24T03:05:00 ERROR 10.0.1.20 GET /breeze 200\n2026-03-11T00:06:00 INFO 10.0.0.106 GET /indigo 404\n2026-03-06T21:07:00 ERROR 10.0.6.210 GET /indigo 200\n2026-03-24T00:08:00 INFO 10.0.7.145 GET /indigo 500\n2026-03-15T04:09:00 INFO 10.0.0.106 GET /indigo 500\n2026-03-16T19:10:00 INFO 10.0.0.106 GET /breeze 200\n2026-03-04T20:11:00 INFO 10.0.6.210 GET /quartz 404\n2026-03-13T04:12:00 INFO 10.0.7.145 GET /breeze 200\n2026-03-20T20:13:00 ERROR 10.0.6.210 GET /quartz 301\n2026-03-18T03:14:00 INFO 10.0.0.106 GET /salt 404\n2026-03-16T21:15:00 ERROR 10.0.0.106 GET /breeze 301\n2026-03-21T07:16:00 ERROR 10.0.0.106 GET /breeze 301\n2026-03-18T13:17:00 INFO 10.0.5.211 GET /sky 200\n2026-03-12T06:18:00 INFO 10.0.0.106 GET /breeze 500\n2026-03-07T13:19:00 ERROR 10.0.6.210 GET /breeze 301\n2026-03-17T01:20:00 INFO 10.0.7.145 GET /quartz 200\n2026-03-06T07:21:00 ERROR 10.0.7.145 GET /quartz 301\n2026-03-11T07:22:00 ERROR 10.0.6.210 GET /sky 200\n2026-03-04T13:23:00 ERROR 10.0.5.237 GET /quartz 200\n2026-03-13T08:24:00 WARN 10.0.6.210 GET /sky 200\n2026-03-27T10:25:00 INFO 10.0.6.210 GET /breeze 500\n2026-03-18T05:26:00 INFO 10.0.5.237 GET /sky 500\n2026-03-20T16:27:00 INFO 10.0.6.210 GET /quartz 200\n2026-03-20T00:28:00 INFO 10.0.5.237 GET /sky 404\n2026-03-21T00:29:00 WARN 10.0.1.20 GET /salt 200\n2026-03-27T13:30:00 INFO 10.0.5.211 GET /sky 200\n2026-03-01T14:31:00 WARN 10.0.7.145 GET /quartz 200\n2026-03-11T05:32:00 INFO 10.0.7.145 GET /salt 404\n2026-03-27T23:33:00 ERROR 10.0.6.210 GET /quartz 404\n'


def test_step2_csv_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'csv').iterdir()) == ['north_tide.csv', 'planet_stone.csv']


def test_step2_json_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'json').iterdir()) == ['comet_beacon.json', 'jasmine_candle.json', 'spark_lemon.json']


def test_step2_txt_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'txt').iterdir()) == ['delta_olive.txt', 'garden_forest.txt']


def test_step2_no_loose_files():
    assert not [x for x in (APP / 'step2/inbox').iterdir() if x.is_file()]


def test_step2_contents_intact():
    assert read('step2/inbox/csv/planet_stone.csv') == 'quartz crystal anchor\n'
    assert read('step2/inbox/csv/north_tide.csv') == 'topaz arrow badge\n'
    assert read('step2/inbox/json/spark_lemon.json') == 'breeze oak zephyr\n'
    assert read('step2/inbox/json/comet_beacon.json') == 'polar dawn robin\n'
    assert read('step2/inbox/json/jasmine_candle.json') == 'winter dune beacon\n'
    assert read('step2/inbox/txt/delta_olive.txt') == 'tulip anchor forest\n'
    assert read('step2/inbox/txt/garden_forest.txt') == 'lagoon cedar north\n'


def test_step2_other_file_untouched():
    assert read('step2/raven_carbon.md') == '# slate iris\nkeep this file as it is\n'


def test_step3_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step3/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.process_value)


def test_step3_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step3/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.process_value(*([1.1, 1.05, 9.31, 8.82],)) == 24.13


def test_step3_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step3/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.process_value(*([],)) == 0


def test_step3_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step3/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.process_value(*([79],)) == 94.01


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
