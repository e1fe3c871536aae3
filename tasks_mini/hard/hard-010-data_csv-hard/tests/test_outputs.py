"""Protected checks for task hard-010-data_csv-hard (data_csv, hard): one test per semantic check.

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
    assert lines('summary.csv')[0] == 'city,total_points'


def test_one_row_per_city():
    assert len(lines('summary.csv')) == 6


def test_sorted_by_city():
    rows = [l.split(',')[0] for l in lines('summary.csv')[1:]]
    assert rows == sorted(rows)


def test_totals_correct():
    assert read('summary.csv') == 'city,total_points\nberlin,98\ncairo,42\ndakar,97\ndelhi,143\nlima,98\n'


def test_input_unchanged():
    assert read('horizon_meteor.csv') == 'name,city,points\nfrank,cairo,24\ndave,berlin,42\nerin,delhi,97\nbob,dakar,97\nwendy,delhi,44\nrupert,lima,98\npeggy,cairo,18\nheidi,berlin,52\nalice,berlin,4\njudy,delhi,2\n'
