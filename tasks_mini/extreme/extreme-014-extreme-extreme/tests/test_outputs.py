"""Protected checks for task extreme-014-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_still_parses():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert cp.sections() == ['server', 'cache', 'database']


def test_step1_target_changed():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert cp['server']['port'] == '4313'


def test_step1_other_sections_unchanged():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert cp['cache']['port'] == '1351'
    assert cp['database']['port'] == '2125'


def test_step1_enabled_flags_kept():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert all('enabled' in cp[s] for s in ['server', 'cache', 'database'])


def test_step2_new_archive_exists():
    assert (APP / 'step2/spark_v2.tar.gz').is_file()


def test_step2_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step2/spark_v2.tar.gz')


def test_step2_line_appended():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step2/spark_v2.tar.gz').get('spark/willow.txt') == 'glacier prism ocean cobalt\npepper dune harbor\n'


def test_step2_version_added():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step2/spark_v2.tar.gz').get('spark/VERSION', '').strip() == '2'


def test_step2_other_files_same():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    m = members('step2/spark_v2.tar.gz')
    assert {k: m.get(k) for k in ['spark/crystal.txt', 'spark/solar.txt']} == {k: v for k, v in {'spark/willow.txt': 'glacier prism ocean cobalt\n', 'spark/solar.txt': 'desert echo amber sapphire\n', 'spark/crystal.txt': 'slate desert arrow saffron\n'}.items() if k != 'spark/willow.txt'}


def test_step2_old_archive_unchanged():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step2/spark.tar.gz') == {'spark/willow.txt': 'glacier prism ocean cobalt\n', 'spark/solar.txt': 'desert echo amber sapphire\n', 'spark/crystal.txt': 'slate desert arrow saffron\n'}


def test_step3_output_exists():
    assert (APP / 'step3/zephyr_amber.txt').is_file()


def test_step3_three_lines():
    assert len(lines('step3/zephyr_amber.txt')) == 3


def test_step3_format_word_count():
    for line in lines('step3/zephyr_amber.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step3_top_word():
    assert lines('step3/zephyr_amber.txt')[0].split() == ['lunar', '17']


def test_step3_content_exact():
    assert read('step3/zephyr_amber.txt') == 'lunar 17\ntide 14\nlemon 13\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
