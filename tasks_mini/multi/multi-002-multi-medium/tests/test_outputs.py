"""Protected checks for task multi-002-multi-medium (multi, medium): one test per semantic check.

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
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.solve_result)


def test_step1_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*(25,)) == 250


def test_step1_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*(19,)) == 190


def test_step1_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step1/core.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.solve_result(*(23,)) == 230


def test_step2_archive_exists():
    assert (APP / 'step2/cedar_backup.tar.gz').is_file()


def test_step2_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step2/cedar_backup.tar.gz')
    assert (APP / 'step2/cedar_backup.tar.gz').read_bytes()[:2] == b'\x1f\x8b'


def test_step2_members_present():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert sorted(members('step2/cedar_backup.tar.gz')) == ['cedar/linen.txt', 'cedar/mirror.txt']


def test_step2_contents_match():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step2/cedar_backup.tar.gz') == {'cedar/linen.txt': 'island moss summit oak\n', 'cedar/mirror.txt': 'ocean island tundra forest\n'}


def test_step2_directory_kept():
    assert (APP / 'step2/cedar').is_dir()
