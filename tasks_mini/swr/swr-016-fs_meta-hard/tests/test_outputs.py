"""Protected checks for task swr-016-fs_meta-hard (fs_meta, hard): one test per semantic check.

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


def test_current_is_link():
    assert (APP / 'current').is_symlink()


def test_current_target():
    import os
    assert os.readlink(APP / 'current').rstrip('/') == 'releases/v6'


def test_current_resolves():
    assert read('current/slate.txt') == 'slate version 6\n'


def test_old_releases_read_only():
    import stat
    def mode(rel):
        return stat.S_IMODE((APP / rel).lstat().st_mode)
    assert mode('releases/v3/slate.txt') == 0o444
    assert mode('releases/v4/slate.txt') == 0o444


def test_newest_writable():
    import stat
    def mode(rel):
        return stat.S_IMODE((APP / rel).lstat().st_mode)
    assert mode('releases/v6/slate.txt') & 0o200
