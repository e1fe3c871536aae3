"""Protected checks for task hard-028-archives-medium (archives, medium): one test per semantic check.

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
    assert (APP / 'pepper_backup.tar.gz').is_file()


def test_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'pepper_backup.tar.gz')
    assert (APP / 'pepper_backup.tar.gz').read_bytes()[:2] == b'\x1f\x8b'


def test_members_present():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert sorted(members('pepper_backup.tar.gz')) == ['pepper/arrow.txt', 'pepper/badge.txt', 'pepper/meadow.txt']


def test_contents_match():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('pepper_backup.tar.gz') == {'pepper/badge.txt': 'ocean field coral walnut\n', 'pepper/arrow.txt': 'slate kettle pebble solar\n', 'pepper/meadow.txt': 'storm orbit dune ridge\n'}


def test_directory_kept():
    assert (APP / 'pepper').is_dir()
