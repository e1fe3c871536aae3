"""Protected checks for task extreme-001-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.solve_result)


def test_step1_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*('45s',)) == 45


def test_step1_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*('1h30m',)) == 5400


def test_step1_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*('2m5s',)) == 125


def test_step1_case_4():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*('10h',)) == 36000


def test_step1_case_5():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/mathx.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*('1h1m1s',)) == 3661


def test_step2_log_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'log').iterdir()) == ['harbor_quartz.log', 'linen_ember.log', 'winter_pepper.log']


def test_step2_txt_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'txt').iterdir()) == ['birch_atlas.txt', 'lagoon_violet.txt']


def test_step2_csv_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'csv').iterdir()) == ['cherry_birch.csv', 'coral_lotus.csv']


def test_step2_no_loose_files():
    assert not [x for x in (APP / 'step2/inbox').iterdir() if x.is_file()]


def test_step2_contents_intact():
    assert read('step2/inbox/log/harbor_quartz.log') == 'ember delta comet\n'
    assert read('step2/inbox/log/linen_ember.log') == 'cobalt ivory polar\n'
    assert read('step2/inbox/log/winter_pepper.log') == 'plum granite echo\n'
    assert read('step2/inbox/txt/birch_atlas.txt') == 'desert tulip ember\n'
    assert read('step2/inbox/txt/lagoon_violet.txt') == 'violet raven lemon\n'
    assert read('step2/inbox/csv/cherry_birch.csv') == 'field jasmine ivory\n'
    assert read('step2/inbox/csv/coral_lotus.csv') == 'cipher cobalt beacon\n'


def test_step2_other_file_untouched():
    assert read('step2/crystal_willow.md') == '# lantern onyx\nkeep this file as it is\n'


def test_step3_new_archive_exists():
    assert (APP / 'step3/arrow_v2.tar.gz').is_file()


def test_step3_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step3/arrow_v2.tar.gz')


def test_step3_line_appended():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/arrow_v2.tar.gz').get('arrow/jade.txt') == 'tulip cloud valley lunar\nforest plum basil\n'


def test_step3_version_added():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/arrow_v2.tar.gz').get('arrow/VERSION', '').strip() == '2'


def test_step3_other_files_same():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    m = members('step3/arrow_v2.tar.gz')
    assert {k: m.get(k) for k in ['arrow/reef.txt']} == {k: v for k, v in {'arrow/jade.txt': 'tulip cloud valley lunar\n', 'arrow/reef.txt': 'forest sage walnut birch\n'}.items() if k != 'arrow/jade.txt'}


def test_step3_old_archive_unchanged():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step3/arrow.tar.gz') == {'arrow/jade.txt': 'tulip cloud valley lunar\n', 'arrow/reef.txt': 'forest sage walnut birch\n'}


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
