"""Protected checks for task core-038-archives-easy (archives, easy): one test per semantic check.

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
    assert (APP / 'extracted').is_dir()


def test_file1_extracted():
    assert read('extracted/garden/amber.txt') == 'polar arrow cipher field\n'


def test_file2_extracted():
    assert read('extracted/garden/topaz.txt') == 'maple tulip radar marble\n'


def test_archive_kept():
    assert (APP / 'garden.tar.gz').is_file()
