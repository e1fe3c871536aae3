"""Protected checks for task swr-007-fs_meta-easy (fs_meta, easy): one test per semantic check.

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


def test_is_executable():
    import stat
    def mode(rel):
        return stat.S_IMODE((APP / rel).lstat().st_mode)
    assert mode('lagoon.sh') & 0o100


def test_content_kept():
    assert read('lagoon.sh') == "#!/bin/sh\necho 'comet plum'\n"


def test_runs_directly():
    assert run([str(APP / 'lagoon.sh')]).stdout.strip() == 'comet plum'
