"""Protected checks for task multi-003-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_archive_exists():
    assert (APP / 'step1/copper_backup.tar.gz').is_file()


def test_step1_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step1/copper_backup.tar.gz')
    assert (APP / 'step1/copper_backup.tar.gz').read_bytes()[:2] == b'\x1f\x8b'


def test_step1_members_present():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert sorted(members('step1/copper_backup.tar.gz')) == ['copper/ember.txt', 'copper/jasmine.txt']


def test_step1_contents_match():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step1/copper_backup.tar.gz') == {'copper/ember.txt': 'mint salt juniper flint\n', 'copper/jasmine.txt': 'olive pine juniper river\n'}


def test_step1_directory_kept():
    assert (APP / 'step1/copper').is_dir()


def test_step2_output_exists():
    assert (APP / 'step2/marble.txt').is_file()


def test_step2_is_a_number():
    assert read('step2/marble.txt').strip().isdigit()


def test_step2_value_correct():
    assert read('step2/marble.txt').strip() == '7'


def test_step2_input_unchanged():
    assert read('step2/linen_cloud.csv') == 'name,city,score\nxena,berlin,22\nbob,lima,75\nheidi,lima,81\ncarol,cairo,70\nnina,berlin,6\nvictor,delhi,45\ndave,delhi,75\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
