"""Protected checks for task extreme-015-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_new_archive_exists():
    assert (APP / 'step1/iris_v2.tar.gz').is_file()


def test_step1_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step1/iris_v2.tar.gz')


def test_step1_line_appended():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step1/iris_v2.tar.gz').get('iris/forest.txt') == 'marble hazel galaxy fern\nflint planet delta\n'


def test_step1_version_added():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step1/iris_v2.tar.gz').get('iris/VERSION', '').strip() == '2'


def test_step1_other_files_same():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    m = members('step1/iris_v2.tar.gz')
    assert {k: m.get(k) for k in ['iris/orbit.txt', 'iris/zephyr.txt']} == {k: v for k, v in {'iris/orbit.txt': 'hazel falcon carbon storm\n', 'iris/forest.txt': 'marble hazel galaxy fern\n', 'iris/zephyr.txt': 'birch cable oak arrow\n'}.items() if k != 'iris/forest.txt'}


def test_step1_old_archive_unchanged():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step1/iris.tar.gz') == {'iris/orbit.txt': 'hazel falcon carbon storm\n', 'iris/forest.txt': 'marble hazel galaxy fern\n', 'iris/zephyr.txt': 'birch cable oak arrow\n'}


def test_step2_json_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'json').iterdir()) == ['atlas_spark.json', 'salt_maple.json', 'winter_mirror.json']


def test_step2_txt_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'txt').iterdir()) == ['field_timber.txt', 'onyx_zephyr.txt']


def test_step2_csv_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'csv').iterdir()) == ['comet_apple.csv', 'raven_reef.csv', 'saffron_stone.csv']


def test_step2_no_loose_files():
    assert not [x for x in (APP / 'step2/inbox').iterdir() if x.is_file()]


def test_step2_contents_intact():
    assert read('step2/inbox/json/winter_mirror.json') == 'delta quartz bloom\n'
    assert read('step2/inbox/json/atlas_spark.json') == 'forest bloom sky\n'
    assert read('step2/inbox/json/salt_maple.json') == 'sage slate sky\n'
    assert read('step2/inbox/txt/onyx_zephyr.txt') == 'badge willow coral\n'
    assert read('step2/inbox/txt/field_timber.txt') == 'mirror hazel field\n'
    assert read('step2/inbox/csv/raven_reef.csv') == 'quill coral harbor\n'
    assert read('step2/inbox/csv/saffron_stone.csv') == 'orchid violet tulip\n'
    assert read('step2/inbox/csv/comet_apple.csv') == 'quartz reef desert\n'


def test_step2_other_file_untouched():
    assert read('step2/indigo_echo.md') == '# marble lunar\nkeep this file as it is\n'


def test_step3_valid_json():
    json.loads(read('step3/settings.json'))


def test_step3_workers_set():
    assert json.loads(read('step3/settings.json'))['limits']['workers'] == 109


def test_step3_feature_appended():
    assert json.loads(read('step3/settings.json'))['features'] == ['badge', 'copper', 'ridge', 'planet']


def test_step3_rest_unchanged():
    d = json.loads(read('step3/settings.json'))
    assert d['service'] == {'name': 'sunset', 'port': 2586} and d['limits']['timeout'] == 159


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
