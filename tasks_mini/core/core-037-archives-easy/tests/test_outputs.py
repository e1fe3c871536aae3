"""Protected checks for task core-037-archives-easy (archives, easy): one test per semantic check.

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


def test_dest_exists():
    assert (APP / 'unpacked').is_dir()


def test_file1_extracted():
    assert read('unpacked/river/north.txt') == 'garden cedar ivory walnut\n'


def test_file2_extracted():
    assert read('unpacked/river/solar.txt') == 'spark island sunset meteor\n'


def test_archive_kept():
    assert (APP / 'river.tar.gz').is_file()
