"""Protected checks for task hard-003-file_ops-hard (file_ops, hard): one test per semantic check.

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
    assert sorted(x.name for x in (APP / 'inbox' / 'log').iterdir()) == ['canyon_carbon.log', 'comet_cherry.log']


def test_csv_folder():
    assert sorted(x.name for x in (APP / 'inbox' / 'csv').iterdir()) == ['apple_lunar.csv', 'ocean_stone.csv', 'raven_pepper.csv']


def test_txt_folder():
    assert sorted(x.name for x in (APP / 'inbox' / 'txt').iterdir()) == ['juniper_canyon.txt', 'sapphire_coral.txt']


def test_no_loose_files():
    assert not [x for x in (APP / 'inbox').iterdir() if x.is_file()]


def test_contents_intact():
    assert read('inbox/log/canyon_carbon.log') == 'velvet violet timber\n'
    assert read('inbox/log/comet_cherry.log') == 'garnet glacier shadow\n'
    assert read('inbox/csv/raven_pepper.csv') == 'lemon cable horizon\n'
    assert read('inbox/csv/ocean_stone.csv') == 'harbor hazel carbon\n'
    assert read('inbox/csv/apple_lunar.csv') == 'bloom stone sky\n'
    assert read('inbox/txt/juniper_canyon.txt') == 'sage forest slate\n'
    assert read('inbox/txt/sapphire_coral.txt') == 'comet bloom oak\n'


def test_other_file_untouched():
    assert read('mirror_border.md') == '# onyx pepper\nkeep this file as it is\n'
