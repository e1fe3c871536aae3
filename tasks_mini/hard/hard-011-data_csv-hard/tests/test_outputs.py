"""Protected checks for task hard-011-data_csv-hard (data_csv, hard): one test per semantic check.

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


def test_output_exists():
    assert (APP / 'summary.csv').is_file()


def test_header():
    assert lines('summary.csv')[0] == 'city,total_score'


def test_one_row_per_city():
    assert len(lines('summary.csv')) == 6


def test_sorted_by_city():
    rows = [l.split(',')[0] for l in lines('summary.csv')[1:]]
    assert rows == sorted(rows)


def test_totals_correct():
    assert read('summary.csv') == 'city,total_score\nberlin,40\ncairo,270\ndakar,160\ndelhi,118\nlima,258\n'


def test_input_unchanged():
    assert read('border_glacier.csv') == 'name,city,score\ngrace,dakar,64\nzoe,lima,16\nyusuf,delhi,44\nkarl,lima,88\nquinn,lima,79\nnina,berlin,40\ntrent,cairo,98\nheidi,cairo,42\nfrank,delhi,74\nsybil,cairo,16\noscar,cairo,49\nmallory,dakar,1\nliam,dakar,95\nvictor,cairo,65\nalice,lima,75\n'
