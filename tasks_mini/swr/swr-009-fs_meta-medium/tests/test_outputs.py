"""Protected checks for task swr-009-fs_meta-medium (fs_meta, medium): one test per semantic check.

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


def test_secret_mode():
    import stat
    def mode(rel):
        return stat.S_IMODE((APP / rel).lstat().st_mode)
    assert mode('spark.key') == 0o600


def test_public_mode():
    import stat
    def mode(rel):
        return stat.S_IMODE((APP / rel).lstat().st_mode)
    assert mode('dawn.pub') == 0o644


def test_contents_kept():
    assert read('spark.key') == 'radar apple breeze ember ivory\n' and read('dawn.pub') == 'basil badge zephyr frost border\n'
