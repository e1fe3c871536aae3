"""Protected checks for task swr-003-fs_meta-easy (fs_meta, easy): one test per semantic check.

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


def test_link_exists():
    assert (APP / 'latest.txt').is_symlink()


def test_link_target():
    import os
    assert os.readlink(APP / 'latest.txt') == 'frost_violet.txt'


def test_link_resolves():
    assert read('latest.txt') == 'ocean topaz plum jasmine\n'
