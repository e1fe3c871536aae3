"""Protected checks for task extreme-005-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_json_folder():
    assert sorted(x.name for x in (APP / 'step1/inbox' / 'json').iterdir()) == ['lemon_anchor.json', 'linen_valley.json', 'river_mirror.json']


def test_step1_csv_folder():
    assert sorted(x.name for x in (APP / 'step1/inbox' / 'csv').iterdir()) == ['cherry_sapphire.csv', 'horizon_pine.csv', 'pepper_glacier.csv']


def test_step1_log_folder():
    assert sorted(x.name for x in (APP / 'step1/inbox' / 'log').iterdir()) == ['bloom_island.log', 'cobalt_dawn.log', 'pepper_lemon.log']


def test_step1_no_loose_files():
    assert not [x for x in (APP / 'step1/inbox').iterdir() if x.is_file()]


def test_step1_contents_intact():
    assert read('step1/inbox/json/linen_valley.json') == 'cable iris tundra\n'
    assert read('step1/inbox/json/river_mirror.json') == 'mirror salt echo\n'
    assert read('step1/inbox/json/lemon_anchor.json') == 'summit solar timber\n'
    assert read('step1/inbox/csv/horizon_pine.csv') == 'dawn robin breeze\n'
    assert read('step1/inbox/csv/cherry_sapphire.csv') == 'pepper quill comet\n'
    assert read('step1/inbox/csv/pepper_glacier.csv') == 'beacon island polar\n'
    assert read('step1/inbox/log/pepper_lemon.log') == 'cotton harbor valley\n'
    assert read('step1/inbox/log/cobalt_dawn.log') == 'shadow ridge pepper\n'
    assert read('step1/inbox/log/bloom_island.log') == 'timber plum nickel\n'


def test_step1_other_file_untouched():
    assert read('step1/pepper_crystal.md') == '# meteor beacon\nkeep this file as it is\n'


def test_step2_script_runs_cleanly():
    (APP / 'step2/quill.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/zephyr.sh'])
    assert r.returncode == 0, r.stderr


def test_step2_output_written():
    (APP / 'step2/quill.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/zephyr.sh'])
    assert (APP / 'step2/quill.txt').is_file()


def test_step2_output_correct():
    (APP / 'step2/quill.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/zephyr.sh'])
    assert read('step2/quill.txt') == 'row 1: crystal reef\nrow 2: canyon forest topaz prism\nrow 3: amber topaz candle planet cherry\nrow 4: salt quartz breeze anchor\nrow 5: jade salt echo plum pine\nrow 6: lemon kettle lotus island island\n'


def test_step2_line_count():
    (APP / 'step2/quill.txt').unlink(missing_ok=True)
    run(['bash', 'step2/zephyr.sh'])
    assert len(lines('step2/quill.txt')) == 6


def test_step2_reads_input_file():
    assert 'quill_onyx.txt' in read('step2/zephyr.sh')


def test_step3_output_exists():
    assert (APP / 'step3/filtered.csv').is_file()


def test_step3_header_kept():
    assert lines('step3/filtered.csv')[0] == 'name,city,amount'


def test_step3_row_count():
    assert len(lines('step3/filtered.csv')) == 8


def test_step3_all_above_threshold():
    assert all(int(l.split(',')[2]) > 57 for l in lines('step3/filtered.csv')[1:])


def test_step3_content_exact():
    assert read('step3/filtered.csv') == 'name,city,amount\ngrace,berlin,70\nyusuf,dakar,86\nmallory,lima,78\nkarl,delhi,88\nerin,berlin,66\nwendy,lima,69\nvictor,lima,75\n'


def test_step3_input_unchanged():
    assert read('step3/saffron_cedar.csv') == 'name,city,amount\nbob,dakar,34\ngrace,berlin,70\ntrent,berlin,12\nzoe,cairo,57\nyusuf,dakar,86\nmallory,lima,78\nkarl,delhi,88\nerin,berlin,66\njudy,lima,45\ncarol,cairo,43\nwendy,lima,69\nxena,cairo,20\numa,cairo,49\nvictor,lima,75\nliam,delhi,34\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
