"""Protected checks for task extreme-013-extreme-extreme (extreme, extreme): one test per semantic check.

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
    assert (APP / 'step1/orchid.txt').is_file()


def test_step1_three_lines():
    assert len(lines('step1/orchid.txt')) == 3


def test_step1_top_path():
    assert lines('step1/orchid.txt')[0].split() == ['10', '/meteor']


def test_step1_ranking_exact():
    assert [l.split() for l in lines('step1/orchid.txt')] == [['10', '/meteor'], ['9', '/radar'], ['8', '/apple']]


def test_step1_hours_file_exists():
    assert (APP / 'step1/errors_by_hour.txt').is_file()


def test_step1_hours_exact():
    assert read('step1/errors_by_hour.txt') == '04 1\n06 1\n11 1\n'


def test_step1_log_unchanged():
    assert read('step1/web.log') == '2026-03-14T09:00:00 INFO 10.0.7.251 GET /radar 200\n2026-03-18T04:01:00 INFO 10.0.8.156 GET /meteor 200\n2026-03-07T08:02:00 INFO 10.0.8.156 GET /radar 404\n2026-03-20T04:03:00 INFO 10.0.0.88 GET /meteor 200\n2026-03-22T16:04:00 INFO 10.0.7.251 GET /radar 200\n2026-03-19T11:05:00 WARN 10.0.5.198 GET /oak 404\n2026-03-26T04:06:00 ERROR 10.0.3.1 GET /radar 200\n2026-03-16T16:07:00 WARN 10.0.8.156 GET /oak 301\n2026-03-13T11:08:00 ERROR 10.0.9.188 GET /meteor 301\n2026-03-19T08:09:00 WARN 10.0.5.198 GET /apple 500\n2026-03-26T11:10:00 WARN 10.0.3.1 GET /radar 200\n2026-03-19T02:11:00 INFO 10.0.0.88 GET /quill 200\n2026-03-26T17:12:00 INFO 10.0.0.88 GET /quill 200\n2026-03-03T00:13:00 INFO 10.0.8.156 GET /oak 200\n2026-03-17T10:14:00 INFO 10.0.5.198 GET /apple 301\n2026-03-06T02:15:00 INFO 10.0.0.88 GET /radar 404\n2026-03-26T11:16:00 WARN 10.0.8.156 GET /apple 200\n2026-03-15T13:17:00 INFO 10.0.3.1 GET /apple 200\n2026-03-21T02:18:00 INFO 10.0.3.1 GET /quill 500\n2026-03-03T10:19:00 INFO 10.0.3.1 GET /meteor 200\n2026-03-12T12:20:00 INFO 10.0.3.1 GET /quill 200\n2026-03-11T01:21:00 WARN 10.0.8.156 GET /oak 301\n2026-03-03T11:22:00 INFO 10.0.0.88 GET /meteor 500\n2026-03-01T22:23:00 WARN 10.0.3.1 GET /apple 500\n2026-03-22T14:24:00 INFO 10.0.7.251 GET /radar 404\n2026-03-14T04:25:00 INFO 10.0.7.251 GET /apple 200\n2026-03-10T01:26:00 WARN 10.0.3.1 GET /meteor 404\n2026-03-08T02:27:00 INFO 10.0.0.88 GET /meteor 500\n2026-03-14T14:28:00 INFO 10.0.8.156 GET /apple 200\n2026-03-09T22:29:00 INFO 10.0.0.88 GET /radar 404\n2026-03-12T04:30:00 INFO 10.0.8.156 GET /meteor 200\n2026-03-18T16:31:00 INFO 10.0.5.198 GET /oak 200\n2026-03-03T06:32:00 ERROR 10.0.7.251 GET /apple 200\n2026-03-18T03:33:00 INFO 10.0.7.251 GET /meteor 200\n2026-03-10T18:34:00 INFO 10.0.9.188 GET /radar 200\n2026-03-07T13:35:00 INFO 10.0.0.88 GET /meteor 404\n2026-03-12T22:36:00 INFO 10.0.7.251 GET /oak 404\n'


def test_step2_script_exists():
    assert (APP / 'step2/stone.sh').is_file()


def test_step2_script_executable():
    import os
    assert os.access(APP / 'step2/stone.sh', os.X_OK)


def test_step2_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('silver shadow crystal\ncobalt orchid\nspruce velvet\ntundra north island plum sky\nember robin beacon\ncotton lemon copper solar ocean\nsky field salt reef\n')
    assert run(['bash', 'step2/stone.sh', f.name]).stdout.strip() == '7'


def test_step2_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('quartz jade\nviolet timber lagoon sage\ncotton apple beacon galaxy onyx\ndelta cable carbon hazel velvet\n')
    assert run(['bash', 'step2/stone.sh', f.name]).stdout.strip() == '4'


def test_step2_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('basil indigo lotus timber onyx sage\nlantern sunset\n\n\nplum cloud lotus olive\nmaple cipher breeze pebble pine quill\nridge stone island\nnickel indigo solar tulip mirror\n')
    assert run(['bash', 'step2/stone.sh', f.name]).stdout.strip() == '6'


def test_step3_valid_json():
    json.loads(read('step3/settings.json'))


def test_step3_workers_set():
    assert json.loads(read('step3/settings.json'))['limits']['workers'] == 43


def test_step3_feature_appended():
    assert json.loads(read('step3/settings.json'))['features'] == ['echo', 'valley', 'mint', 'nebula']


def test_step3_rest_unchanged():
    d = json.loads(read('step3/settings.json'))
    assert d['service'] == {'name': 'willow', 'port': 2655} and d['limits']['timeout'] == 301


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step3'])
