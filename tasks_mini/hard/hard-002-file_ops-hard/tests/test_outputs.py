"""Protected checks for task hard-002-file_ops-hard (file_ops, hard): one test per semantic check.

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


def test_log_folder():
    assert sorted(x.name for x in (APP / 'inbox' / 'log').iterdir()) == ['echo_cobalt.log', 'moss_echo.log']


def test_md_folder():
    assert sorted(x.name for x in (APP / 'inbox' / 'md').iterdir()) == ['amber_canyon.md', 'ridge_plum.md', 'zephyr_falcon.md']


def test_json_folder():
    assert sorted(x.name for x in (APP / 'inbox' / 'json').iterdir()) == ['indigo_badge.json', 'meteor_orbit.json']


def test_no_loose_files():
    assert not [x for x in (APP / 'inbox').iterdir() if x.is_file()]


def test_contents_intact():
    assert read('inbox/log/echo_cobalt.log') == 'field violet quartz\n'
    assert read('inbox/log/moss_echo.log') == 'granite orbit pepper\n'
    assert read('inbox/md/amber_canyon.md') == 'amber nebula stone\n'
    assert read('inbox/md/ridge_plum.md') == 'candle atlas ember\n'
    assert read('inbox/md/zephyr_falcon.md') == 'topaz lunar garnet\n'
    assert read('inbox/json/indigo_badge.json') == 'tide violet bloom\n'
    assert read('inbox/json/meteor_orbit.json') == 'galaxy north atlas\n'


def test_other_file_untouched():
    assert read('oak_polar.md') == '# prism tulip\nkeep this file as it is\n'
