"""Protected checks for task extreme-009-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_valid_json():
    json.loads(read('step1/settings.json'))


def test_step1_workers_set():
    assert json.loads(read('step1/settings.json'))['limits']['workers'] == 385


def test_step1_feature_appended():
    assert json.loads(read('step1/settings.json'))['features'] == ['polar', 'coral', 'robin', 'cloud']


def test_step1_rest_unchanged():
    d = json.loads(read('step1/settings.json'))
    assert d['service'] == {'name': 'coral', 'port': 8932} and d['limits']['timeout'] == 277


def test_step2_csv_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'csv').iterdir()) == ['copper_quartz.csv', 'forest_raven.csv']


def test_step2_md_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'md').iterdir()) == ['radar_cobalt.md', 'spark_frost.md']


def test_step2_log_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'log').iterdir()) == ['atlas_apple.log', 'radar_storm.log']


def test_step2_no_loose_files():
    assert not [x for x in (APP / 'step2/inbox').iterdir() if x.is_file()]


def test_step2_contents_intact():
    assert read('step2/inbox/csv/forest_raven.csv') == 'mirror copper carbon\n'
    assert read('step2/inbox/csv/copper_quartz.csv') == 'quill polar falcon\n'
    assert read('step2/inbox/md/spark_frost.md') == 'cable velvet canyon\n'
    assert read('step2/inbox/md/radar_cobalt.md') == 'cloud indigo copper\n'
    assert read('step2/inbox/log/atlas_apple.log') == 'pepper radar harbor\n'
    assert read('step2/inbox/log/radar_storm.log') == 'reef garden summit\n'


def test_step2_other_file_untouched():
    assert read('step2/basil_marble.md') == '# willow quartz\nkeep this file as it is\n'


def test_step3_output_exists():
    assert (APP / 'step3/island.txt').is_file()


def test_step3_three_lines():
    assert len(lines('step3/island.txt')) == 3


def test_step3_top_path():
    assert lines('step3/island.txt')[0].split() == ['10', '/nickel']


def test_step3_ranking_exact():
    assert [l.split() for l in lines('step3/island.txt')] == [['10', '/nickel'], ['8', '/kettle'], ['7', '/maple']]


def test_step3_hours_file_exists():
    assert (APP / 'step3/errors_by_hour.txt').is_file()


def test_step3_hours_exact():
    assert read('step3/errors_by_hour.txt') == '01 1\n05 1\n08 1\n09 1\n11 1\n16 1\n17 1\n21 1\n23 1\n'


def test_step3_log_unchanged():
    assert read('step3/access.log') == '2026-03-19T04:00:00 INFO 10.0.4.124 GET /kettle 404\n2026-03-23T17:01:00 INFO 10.0.4.124 GET /nickel 500\n2026-03-19T20:02:00 WARN 10.0.5.166 GET /nickel 301\n2026-03-18T07:03:00 INFO 10.0.4.124 GET /maple 200\n2026-03-14T13:04:00 INFO 10.0.8.125 GET /kettle 200\n2026-03-11T16:05:00 INFO 10.0.9.203 GET /copper 404\n2026-03-24T16:06:00 ERROR 10.0.4.124 GET /nickel 404\n2026-03-04T13:07:00 INFO 10.0.9.203 GET /nickel 200\n2026-03-08T02:08:00 INFO 10.0.5.166 GET /sapphire 404\n2026-03-22T21:09:00 ERROR 10.0.8.125 GET /nickel 301\n2026-03-22T17:10:00 ERROR 10.0.9.203 GET /kettle 301\n2026-03-25T05:11:00 INFO 10.0.9.203 GET /nickel 200\n2026-03-19T01:12:00 INFO 10.0.5.166 GET /nickel 200\n2026-03-20T06:13:00 INFO 10.0.4.124 GET /maple 200\n2026-03-09T07:14:00 WARN 10.0.9.203 GET /sapphire 200\n2026-03-10T08:15:00 ERROR 10.0.4.124 GET /copper 200\n2026-03-03T09:16:00 WARN 10.0.9.203 GET /sapphire 200\n2026-03-06T19:17:00 WARN 10.0.8.125 GET /kettle 200\n2026-03-20T00:18:00 INFO 10.0.9.203 GET /maple 404\n2026-03-12T03:19:00 INFO 10.0.5.166 GET /kettle 404\n2026-03-17T05:20:00 ERROR 10.0.8.125 GET /kettle 200\n2026-03-07T12:21:00 INFO 10.0.4.124 GET /maple 404\n2026-03-13T23:22:00 INFO 10.0.5.166 GET /maple 301\n2026-03-21T17:23:00 INFO 10.0.8.125 GET /copper 301\n2026-03-23T01:24:00 ERROR 10.0.5.166 GET /kettle 301\n2026-03-25T11:25:00 INFO 10.0.8.125 GET /copper 500\n2026-03-01T23:26:00 ERROR 10.0.4.124 GET /nickel 200\n2026-03-17T11:27:00 ERROR 10.0.9.203 GET /nickel 500\n2026-03-26T05:28:00 WARN 10.0.9.203 GET /maple 200\n2026-03-26T16:29:00 INFO 10.0.5.166 GET /sapphire 200\n2026-03-28T20:30:00 WARN 10.0.8.125 GET /nickel 200\n2026-03-25T03:31:00 INFO 10.0.9.203 GET /maple 301\n2026-03-03T09:32:00 ERROR 10.0.5.166 GET /kettle 200\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
