"""Protected checks for task multi-021-multi-medium (multi, medium): one test per semantic check.

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


def test_step1_target_exists():
    assert (APP / 'step1/ocean_comet.txt').is_file()


def test_step1_target_content():
    assert read('step1/ocean_comet.txt') == 'robin echo cobalt arrow\n'


def test_step1_source_kept():
    assert read('step1/badge_linen.txt') == 'robin echo cobalt arrow\n'


def test_step1_other_file_untouched():
    assert read('step1/saffron_comet.md') == '# storm winter\nkeep this file as it is\n'


def test_step2_region_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step2/app.conf').get('region') == ['sky']


def test_step2_workers_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step2/app.conf').get('workers') == ['238']


def test_step2_retries_set():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    assert conf('step2/app.conf').get('retries') == ['444']


def test_step2_others_unchanged():
    def conf(rel):
        out = {}
        for line in lines(rel):
            if line.strip() and not line.lstrip().startswith('#'):
                k, v = line.split('=', 1)
                out.setdefault(k.strip(), []).append(v.strip())
        return out
    c = conf('step2/app.conf')
    assert {k: c.get(k) for k in ['host', 'port', 'user']} == {'port': ['7992'], 'host': ['ocean'], 'user': ['quartz']}


def test_step2_no_junk_lines():
    assert all(l.startswith('#') or ' = ' in l for l in lines('step2/app.conf') if l.strip())


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
