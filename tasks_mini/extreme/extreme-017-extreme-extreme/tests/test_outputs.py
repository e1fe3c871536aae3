"""Protected checks for task extreme-017-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_txt_folder():
    assert sorted(x.name for x in (APP / 'step1/inbox' / 'txt').iterdir()) == ['cobalt_juniper.txt', 'lunar_sapphire.txt']


def test_step1_md_folder():
    assert sorted(x.name for x in (APP / 'step1/inbox' / 'md').iterdir()) == ['spruce_galaxy.md', 'stone_storm.md']


def test_step1_log_folder():
    assert sorted(x.name for x in (APP / 'step1/inbox' / 'log').iterdir()) == ['cable_meteor.log', 'echo_coral.log']


def test_step1_no_loose_files():
    assert not [x for x in (APP / 'step1/inbox').iterdir() if x.is_file()]


def test_step1_contents_intact():
    assert read('step1/inbox/txt/lunar_sapphire.txt') == 'ember oak quill\n'
    assert read('step1/inbox/txt/cobalt_juniper.txt') == 'atlas cherry frost\n'
    assert read('step1/inbox/md/stone_storm.md') == 'cobalt garnet delta\n'
    assert read('step1/inbox/md/spruce_galaxy.md') == 'meadow beacon arrow\n'
    assert read('step1/inbox/log/cable_meteor.log') == 'lagoon saffron silver\n'
    assert read('step1/inbox/log/echo_coral.log') == 'border dawn harbor\n'


def test_step1_other_file_untouched():
    assert read('step1/jasmine_zephyr.md') == '# sunset onyx\nkeep this file as it is\n'


def test_step2_script_runs_cleanly():
    (APP / 'step2/valley.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/arrow.sh'])
    assert r.returncode == 0, r.stderr


def test_step2_output_written():
    (APP / 'step2/valley.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/arrow.sh'])
    assert (APP / 'step2/valley.txt').is_file()


def test_step2_output_correct():
    (APP / 'step2/valley.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/arrow.sh'])
    assert read('step2/valley.txt') == 'item 1: hazel birch pebble\nitem 2: moss reef pebble cable ridge spruce\nitem 3: moss birch pepper\nitem 4: planet border hazel\nitem 5: storm field\nitem 6: north solar quill orbit apple juniper\n'


def test_step2_line_count():
    (APP / 'step2/valley.txt').unlink(missing_ok=True)
    run(['bash', 'step2/arrow.sh'])
    assert len(lines('step2/valley.txt')) == 6


def test_step2_reads_input_file():
    assert 'violet_lagoon.txt' in read('step2/arrow.sh')


def test_step3_new_archive_exists():
    assert (APP / 'step3/jade_v2.tar.gz').is_file()


def test_step3_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step3/jade_v2.tar.gz')


def test_step3_line_appended():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/jade_v2.tar.gz').get('jade/candle.txt') == 'sage polar jasmine basil\nlunar forest kettle\n'


def test_step3_version_added():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/jade_v2.tar.gz').get('jade/VERSION', '').strip() == '2'


def test_step3_other_files_same():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    m = members('step3/jade_v2.tar.gz')
    assert {k: m.get(k) for k in ['jade/iris.txt', 'jade/lemon.txt']} == {k: v for k, v in {'jade/iris.txt': 'juniper ridge orbit shadow\n', 'jade/candle.txt': 'sage polar jasmine basil\n', 'jade/lemon.txt': 'crystal pebble desert cobalt\n'}.items() if k != 'jade/candle.txt'}


def test_step3_old_archive_unchanged():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/jade.tar.gz') == {'jade/iris.txt': 'juniper ridge orbit shadow\n', 'jade/candle.txt': 'sage polar jasmine basil\n', 'jade/lemon.txt': 'crystal pebble desert cobalt\n'}


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
