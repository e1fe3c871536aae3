"""Protected checks for task multi-004-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/zephyr_breeze.txt').is_file()


def test_step1_line_count():
    assert len(lines('step1/zephyr_breeze.txt')) == 12


def test_step1_first_line():
    assert lines('step1/zephyr_breeze.txt')[:1] == ['forest']


def test_step1_content_exact():
    assert read('step1/zephyr_breeze.txt') == 'forest\ngarden\narrow\nforest\ncobalt\nfield\nfalcon\nbirch\ncomet\ncable\ncomet\ncomet\n'


def test_step1_input_unchanged():
    assert read('step1/delta_quartz.txt') == 'comet\ncomet\ncable\ncomet\nbirch\nfalcon\nfield\ncobalt\nforest\narrow\ngarden\nforest\n'


def test_step2_dir_exists():
    assert (APP / 'step2/spark').is_dir()


def test_step2_file1_content():
    assert read('step2/spark/meadow.txt').strip() == 'ocean lemon falcon'


def test_step2_file2_content():
    assert read('step2/spark/radar.txt').strip() == 'apple linen indigo'


def test_step2_only_two_files():
    assert sorted(x.name for x in (APP / 'step2/spark').iterdir()) == ['meadow.txt', 'radar.txt']


def test_step2_other_file_untouched():
    assert read('step2/badge_violet.md') == '# lotus border\nkeep this file as it is\n'
