"""Protected checks for task extreme-008-extreme-extreme (extreme, extreme): one test per semantic check.

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
    (APP / 'step1/salt.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/zephyr.sh'])
    assert r.returncode == 0, r.stderr


def test_step1_output_written():
    (APP / 'step1/salt.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/zephyr.sh'])
    assert (APP / 'step1/salt.txt').is_file()


def test_step1_output_correct():
    (APP / 'step1/salt.txt').unlink(missing_ok=True)
    r = run(['bash', 'step1/zephyr.sh'])
    assert read('step1/salt.txt') == 'item 1: fern candle indigo birch winter oak\nitem 2: cedar quartz cherry birch storm canyon\nitem 3: jade tide quartz quartz stone cobalt\nitem 4: planet ridge ember\nitem 5: spruce winter fern juniper cherry lagoon\n'


def test_step1_line_count():
    (APP / 'step1/salt.txt').unlink(missing_ok=True)
    run(['bash', 'step1/zephyr.sh'])
    assert len(lines('step1/salt.txt')) == 5


def test_step1_reads_input_file():
    assert 'cedar_cipher.txt' in read('step1/zephyr.sh')


def test_step2_output_exists():
    assert (APP / 'step2/lunar_kettle.txt').is_file()


def test_step2_three_lines():
    assert len(lines('step2/lunar_kettle.txt')) == 3


def test_step2_format_word_count():
    for line in lines('step2/lunar_kettle.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step2_top_word():
    assert lines('step2/lunar_kettle.txt')[0].split() == ['violet', '19']


def test_step2_content_exact():
    assert read('step2/lunar_kettle.txt') == 'violet 19\narrow 16\nisland 7\n'


def test_step3_new_archive_exists():
    assert (APP / 'step3/frost_v2.tar.gz').is_file()


def test_step3_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step3/frost_v2.tar.gz')


def test_step3_line_appended():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/frost_v2.tar.gz').get('frost/spruce.txt') == 'ivory orchid cobalt sky\nmeadow lagoon glacier\n'


def test_step3_version_added():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/frost_v2.tar.gz').get('frost/VERSION', '').strip() == '2'


def test_step3_other_files_same():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    m = members('step3/frost_v2.tar.gz')
    assert {k: m.get(k) for k in ['frost/cherry.txt']} == {k: v for k, v in {'frost/cherry.txt': 'copper mirror galaxy meteor\n', 'frost/spruce.txt': 'ivory orchid cobalt sky\n'}.items() if k != 'frost/spruce.txt'}


def test_step3_old_archive_unchanged():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/frost.tar.gz') == {'frost/cherry.txt': 'copper mirror galaxy meteor\n', 'frost/spruce.txt': 'ivory orchid cobalt sky\n'}


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
