"""Protected checks for task multi-018-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_output_exists():
    assert (APP / 'step1/dune_river.txt').is_file()


def test_step1_line_count():
    assert len(lines('step1/dune_river.txt')) == 11


def test_step1_first_line():
    assert lines('step1/dune_river.txt')[:1] == ['cherry']


def test_step1_content_exact():
    assert read('step1/dune_river.txt') == 'cherry\ncoral\nfalcon\nborder\nanchor\nfalcon\ndesert\nbadge\ncloud\nbeacon\nanchor\n'


def test_step1_input_unchanged():
    assert read('step1/desert_candle.txt') == 'anchor\nbeacon\ncloud\nbadge\ndesert\nfalcon\nanchor\nborder\nfalcon\ncoral\ncherry\n'


def test_step2_dest_exists():
    assert (APP / 'step2/extracted').is_dir()


def test_step2_file1_extracted():
    assert read('step2/extracted/storm/spark.txt') == 'sage cloud frost canyon\n'


def test_step2_file2_extracted():
    assert read('step2/extracted/storm/storm.txt') == 'cotton plum sapphire dune\n'


def test_step2_archive_kept():
    assert (APP / 'step2/storm.tar.gz').is_file()
