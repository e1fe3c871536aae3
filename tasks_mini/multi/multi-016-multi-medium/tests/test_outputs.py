"""Protected checks for task multi-016-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_dest_exists():
    assert (APP / 'step1/unpacked').is_dir()


def test_step1_file1_extracted():
    assert read('step1/unpacked/kettle/amber.txt') == 'canyon velvet marble shadow\n'


def test_step1_file2_extracted():
    assert read('step1/unpacked/kettle/dune.txt') == 'shadow hazel glacier marble\n'


def test_step1_archive_kept():
    assert (APP / 'step1/kettle.tar.gz').is_file()


def test_step2_dir_exists():
    assert (APP / 'step2/reef').is_dir()


def test_step2_file1_content():
    assert read('step2/reef/cobalt.txt').strip() == 'fern willow canyon'


def test_step2_file2_content():
    assert read('step2/reef/moss.txt').strip() == 'basil polar cipher'


def test_step2_only_two_files():
    assert sorted(x.name for x in (APP / 'step2/reef').iterdir()) == ['cobalt.txt', 'moss.txt']


def test_step2_other_file_untouched():
    assert read('step2/lagoon_pine.md') == '# nickel reef\nkeep this file as it is\n'
