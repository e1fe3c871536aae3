"""Protected checks for task hard-029-archives-medium (archives, medium): one test per semantic check.

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


def test_archive_exists():
    assert (APP / 'topaz_backup.tar.gz').is_file()


def test_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'topaz_backup.tar.gz')
    assert (APP / 'topaz_backup.tar.gz').read_bytes()[:2] == b'\x1f\x8b'


def test_members_present():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert sorted(members('topaz_backup.tar.gz')) == ['topaz/ivory.txt', 'topaz/moss.txt', 'topaz/oak.txt']


def test_contents_match():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('topaz_backup.tar.gz') == {'topaz/moss.txt': 'badge candle sky granite\n', 'topaz/oak.txt': 'salt ember garden cherry\n', 'topaz/ivory.txt': 'pebble comet tide tulip\n'}


def test_directory_kept():
    assert (APP / 'topaz').is_dir()
