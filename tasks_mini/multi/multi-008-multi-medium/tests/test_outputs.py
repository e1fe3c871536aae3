"""Protected checks for task multi-008-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/falcon.txt').is_file()


def test_step1_is_a_number():
    assert read('step1/falcon.txt').strip().lstrip('-').isdigit()


def test_step1_total_correct():
    assert int(read('step1/falcon.txt')) == 499


def test_step1_input_unchanged():
    assert read('step1/dawn_amber.csv') == 'name,city,score\nxena,lima,14\nkarl,cairo,3\nfrank,dakar,72\nbob,cairo,16\ndave,berlin,16\nalice,dakar,69\nivan,delhi,91\nnina,dakar,19\nquinn,lima,92\nzoe,delhi,60\noscar,cairo,47\n'


def test_step2_dir_exists():
    assert (APP / 'step2/delta').is_dir()


def test_step2_file1_content():
    assert read('step2/delta/iris.txt').strip() == 'moss cable cotton'


def test_step2_file2_content():
    assert read('step2/delta/granite.txt').strip() == 'oak desert ember'


def test_step2_only_two_files():
    assert sorted(x.name for x in (APP / 'step2/delta').iterdir()) == ['granite.txt', 'iris.txt']


def test_step2_other_file_untouched():
    assert read('step2/velvet_cipher.md') == '# badge delta\nkeep this file as it is\n'
