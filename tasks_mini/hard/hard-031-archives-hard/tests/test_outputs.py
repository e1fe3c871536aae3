"""Protected checks for task hard-031-archives-hard (archives, hard): one test per semantic check.

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
    assert (APP / 'nebula_v2.tar.gz').is_file()


def test_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'nebula_v2.tar.gz')


def test_line_appended():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('nebula_v2.tar.gz').get('nebula/crystal.txt') == 'comet atlas nebula winter\ncobalt canyon birch\n'


def test_version_added():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('nebula_v2.tar.gz').get('nebula/VERSION', '').strip() == '2'


def test_other_files_same():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    m = members('nebula_v2.tar.gz')
    assert {k: m.get(k) for k in ['nebula/lotus.txt', 'nebula/salt.txt']} == {k: v for k, v in {'nebula/salt.txt': 'crystal birch storm ridge\n', 'nebula/crystal.txt': 'comet atlas nebula winter\n', 'nebula/lotus.txt': 'glacier ember island marble\n'}.items() if k != 'nebula/crystal.txt'}


def test_old_archive_unchanged():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('nebula.tar.gz') == {'nebula/salt.txt': 'crystal birch storm ridge\n', 'nebula/crystal.txt': 'comet atlas nebula winter\n', 'nebula/lotus.txt': 'glacier ember island marble\n'}
