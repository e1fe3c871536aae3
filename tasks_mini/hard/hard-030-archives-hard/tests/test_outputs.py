"""Protected checks for task hard-030-archives-hard (archives, hard): one test per semantic check.

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


def test_new_archive_exists():
    assert (APP / 'amber_v2.tar.gz').is_file()


def test_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'amber_v2.tar.gz')


def test_line_appended():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('amber_v2.tar.gz').get('amber/spark.txt') == 'lotus tide winter birch\ncipher spruce crystal\n'


def test_version_added():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('amber_v2.tar.gz').get('amber/VERSION', '').strip() == '2'


def test_other_files_same():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    m = members('amber_v2.tar.gz')
    assert {k: m.get(k) for k in ['amber/amber.txt']} == {k: v for k, v in {'amber/spark.txt': 'lotus tide winter birch\n', 'amber/amber.txt': 'violet oak quartz velvet\n'}.items() if k != 'amber/spark.txt'}


def test_old_archive_unchanged():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('amber.tar.gz') == {'amber/spark.txt': 'lotus tide winter birch\n', 'amber/amber.txt': 'violet oak quartz velvet\n'}
