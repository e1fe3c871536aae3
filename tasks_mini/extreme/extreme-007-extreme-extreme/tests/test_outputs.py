"""Protected checks for task extreme-007-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_script_exists():
    assert (APP / 'step1/quartz.sh').is_file()


def test_step1_script_executable():
    import os
    assert os.access(APP / 'step1/quartz.sh', os.X_OK)


def test_step1_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('jade sunset atlas amber reef fern\ncipher birch\noak linen north\ntopaz hazel velvet garden topaz forest\nfrost border delta\nshadow mirror canyon orbit zephyr\nreef glacier nebula spark orchid tide\nmarble mirror candle badge sunset solar\n')
    assert run(['bash', 'step1/quartz.sh', f.name]).stdout.strip() == '8'


def test_step1_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('mirror north\ngarden meteor\ncanyon onyx\ncopper echo solar\ncomet candle\napple orbit storm ridge onyx oak\ncloud coral flint zephyr\nsapphire cable lunar meteor sky\n')
    assert run(['bash', 'step1/quartz.sh', f.name]).stdout.strip() == '8'


def test_step1_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('cable fern tide quill\norchid tulip breeze willow\n\n\nolive fern carbon moss arrow\nlagoon plum falcon quill north prism\nolive meadow maple cipher summit border\necho solar badge summit juniper\nbloom desert\n')
    assert run(['bash', 'step1/quartz.sh', f.name]).stdout.strip() == '7'


def test_step2_output_exists():
    assert (APP / 'step2/breeze.txt').is_file()


def test_step2_three_lines():
    assert len(lines('step2/breeze.txt')) == 3


def test_step2_top_path():
    assert lines('step2/breeze.txt')[0].split() == ['9', '/robin']


def test_step2_ranking_exact():
    assert [l.split() for l in lines('step2/breeze.txt')] == [['9', '/robin'], ['9', '/winter'], ['6', '/willow']]


def test_step2_hours_file_exists():
    assert (APP / 'step2/errors_by_hour.txt').is_file()


def test_step2_hours_exact():
    assert read('step2/errors_by_hour.txt') == '00 1\n08 1\n10 1\n13 1\n18 1\n19 1\n21 1\n'


def test_step2_log_unchanged():
    assert read('step2/app.log') == '2026-03-25T08:00:00 WARN 10.0.4.106 GET /spark 200\n2026-03-13T18:01:00 ERROR 10.0.4.106 GET /spark 200\n2026-03-02T19:02:00 ERROR 10.0.6.11 GET /robin 301\n2026-03-13T22:03:00 WARN 10.0.4.106 GET /willow 404\n2026-03-24T13:04:00 ERROR 10.0.7.86 GET /ember 301\n2026-03-19T07:05:00 INFO 10.0.9.127 GET /ember 500\n2026-03-03T08:06:00 INFO 10.0.9.127 GET /winter 200\n2026-03-11T02:07:00 INFO 10.0.7.86 GET /winter 200\n2026-03-11T17:08:00 INFO 10.0.7.86 GET /willow 200\n2026-03-03T21:09:00 INFO 10.0.4.106 GET /winter 404\n2026-03-10T06:10:00 WARN 10.0.4.106 GET /winter 200\n2026-03-09T08:11:00 INFO 10.0.7.125 GET /robin 200\n2026-03-18T18:12:00 INFO 10.0.4.106 GET /willow 200\n2026-03-28T09:13:00 INFO 10.0.9.127 GET /winter 404\n2026-03-18T22:14:00 INFO 10.0.4.55 GET /robin 200\n2026-03-10T03:15:00 INFO 10.0.4.106 GET /robin 301\n2026-03-20T16:16:00 INFO 10.0.7.125 GET /willow 404\n2026-03-21T11:17:00 INFO 10.0.4.55 GET /winter 200\n2026-03-08T21:18:00 ERROR 10.0.4.106 GET /willow 404\n2026-03-13T00:19:00 ERROR 10.0.4.55 GET /robin 200\n2026-03-03T22:20:00 INFO 10.0.7.125 GET /robin 301\n2026-03-20T10:21:00 ERROR 10.0.7.86 GET /spark 301\n2026-03-14T23:22:00 INFO 10.0.4.55 GET /spark 200\n2026-03-06T19:23:00 WARN 10.0.7.125 GET /winter 301\n2026-03-24T02:24:00 INFO 10.0.9.127 GET /spark 200\n2026-03-13T00:25:00 WARN 10.0.7.86 GET /robin 200\n2026-03-15T06:26:00 INFO 10.0.4.55 GET /robin 500\n2026-03-27T00:27:00 INFO 10.0.4.106 GET /robin 404\n2026-03-24T06:28:00 WARN 10.0.6.11 GET /winter 500\n2026-03-19T21:29:00 INFO 10.0.9.127 GET /winter 500\n2026-03-19T21:30:00 INFO 10.0.4.55 GET /willow 500\n2026-03-13T08:31:00 ERROR 10.0.4.106 GET /ember 200\n'


def test_step3_output_exists():
    assert (APP / 'step3/silver_sapphire.txt').is_file()


def test_step3_three_lines():
    assert len(lines('step3/silver_sapphire.txt')) == 3


def test_step3_format_word_count():
    for line in lines('step3/silver_sapphire.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step3_top_word():
    assert lines('step3/silver_sapphire.txt')[0].split() == ['pebble', '26']


def test_step3_content_exact():
    assert read('step3/silver_sapphire.txt') == 'pebble 26\nplum 10\npolar 10\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step2', 'step3'])
