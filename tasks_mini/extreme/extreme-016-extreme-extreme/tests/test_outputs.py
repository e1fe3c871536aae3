"""Protected checks for task extreme-016-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_script_runs_cleanly():
    (APP / 'step1/meteor.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/indigo.sh'])
    assert r.returncode == 0, r.stderr


def test_step1_output_written():
    (APP / 'step1/meteor.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/indigo.sh'])
    assert (APP / 'step1/meteor.txt').is_file()


def test_step1_output_correct():
    (APP / 'step1/meteor.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/indigo.sh'])
    assert read('step1/meteor.txt') == 'step 1: shadow pepper ridge\nstep 2: robin olive ivory arrow\nstep 3: kettle zephyr beacon\nstep 4: amber solar winter kettle basil\nstep 5: timber polar cherry canyon lotus\n'


def test_step1_line_count():
    (APP / 'step1/meteor.txt').unlink(missing_ok=True)
    run(['bash', 'step1/indigo.sh'])
    assert len(lines('step1/meteor.txt')) == 5


def test_step1_reads_input_file():
    assert 'sky_carbon.txt' in read('step1/indigo.sh')


def test_step2_output_exists():
    assert (APP / 'step2/summary.csv').is_file()


def test_step2_header():
    assert lines('step2/summary.csv')[0] == 'city,total_points'


def test_step2_one_row_per_city():
    assert len(lines('step2/summary.csv')) == 6


def test_step2_sorted_by_city():
    rows = [l.split(',')[0] for l in lines('step2/summary.csv')[1:]]
    assert rows == sorted(rows)


def test_step2_totals_correct():
    assert read('step2/summary.csv') == 'city,total_points\nberlin,82\ncairo,118\ndakar,141\ndelhi,29\nlima,107\n'


def test_step2_input_unchanged():
    assert read('step2/cotton_harbor.csv') == 'name,city,points\ntrent,lima,82\nnina,cairo,94\ncarol,dakar,44\nyusuf,delhi,29\npeggy,dakar,9\nivan,berlin,37\noscar,cairo,24\nheidi,dakar,3\nwendy,berlin,20\nquinn,lima,25\njudy,berlin,25\nliam,dakar,85\n'


def test_step3_output_exists():
    assert (APP / 'step3/quartz_tide.txt').is_file()


def test_step3_three_lines():
    assert len(lines('step3/quartz_tide.txt')) == 3


def test_step3_format_word_count():
    for line in lines('step3/quartz_tide.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step3_top_word():
    assert lines('step3/quartz_tide.txt')[0].split() == ['cable', '26']


def test_step3_content_exact():
    assert read('step3/quartz_tide.txt') == 'cable 26\nsunset 20\nlotus 13\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
