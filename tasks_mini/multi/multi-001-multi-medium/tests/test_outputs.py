"""Protected checks for task multi-001-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_file_exists():
    assert (APP / 'step1/quartz_onyx.txt').is_file()


def test_step1_content_matches():
    assert read('step1/quartz_onyx.txt').strip() == 'jasmine cable plum'


def test_step1_other_file_untouched():
    assert read('step1/badge_island.md') == '# glacier atlas\nkeep this file as it is\n'


def test_step2_old_word_gone():
    assert 'garden' not in read('step2/atlas_badge.txt').split()


def test_step2_new_word_count():
    assert read('step2/atlas_badge.txt').split().count('pine') == 4


def test_step2_rest_unchanged():
    assert read('step2/atlas_badge.txt') == 'reef candle planet pine\nmoss spark forest dawn ember harbor\ndune dune\ntundra canyon pine hazel linen\nfield island ember prism flint\npine reef candle planet pine\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
