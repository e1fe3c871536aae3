"""Protected checks for task multi-023-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/comet_backup.tar.gz').is_file()


def test_step1_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step1/comet_backup.tar.gz')
    assert (APP / 'step1/comet_backup.tar.gz').read_bytes()[:2] == b'\x1f\x8b'


def test_step1_members_present():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert sorted(members('step1/comet_backup.tar.gz')) == ['comet/delta.txt', 'comet/shadow.txt']


def test_step1_contents_match():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step1/comet_backup.tar.gz') == {'comet/shadow.txt': 'slate kettle anchor lemon\n', 'comet/delta.txt': 'cherry ocean cable summit\n'}


def test_step1_directory_kept():
    assert (APP / 'step1/comet').is_dir()


def test_step2_file_exists():
    assert (APP / 'step2/topaz_border.txt').is_file()


def test_step2_content_matches():
    assert read('step2/topaz_border.txt').strip() == 'polar ivory badge'


def test_step2_other_file_untouched():
    assert read('step2/cobalt_lotus.md') == '# planet river\nkeep this file as it is\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
