"""Protected checks for task multi-019-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/sage_backup.tar.gz').is_file()


def test_step1_is_gzip_tar():
    import tarfile
    assert tarfile.is_tarfile(APP / 'step1/sage_backup.tar.gz')
    assert (APP / 'step1/sage_backup.tar.gz').read_bytes()[:2] == b'\x1f\x8b'


def test_step1_members_present():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert sorted(members('step1/sage_backup.tar.gz')) == ['sage/canyon.txt', 'sage/sapphire.txt', 'sage/silver.txt']


def test_step1_contents_match():
    import tarfile
    def members(rel):
        with tarfile.open(APP / rel, 'r:gz') as t:
            return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert members('step1/sage_backup.tar.gz') == {'sage/silver.txt': 'radar comet breeze nebula\n', 'sage/canyon.txt': 'tulip cable flint jade\n', 'sage/sapphire.txt': 'galaxy pebble hazel dune\n'}


def test_step1_directory_kept():
    assert (APP / 'step1/sage').is_dir()


def test_step2_module_imports():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert callable(m.calc_value)


def test_step2_case_1():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_value(*([1, 2],)) == 1.5


def test_step2_case_2():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_value(*([4, 4, 4],)) == 4.0


def test_step2_case_3():
    import importlib.util
    spec = importlib.util.spec_from_file_location('m', APP / 'step2/tools.py')
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.calc_value(*([1, 2, 3, 5],)) == 2.75


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
