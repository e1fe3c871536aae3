"""Protected checks for task multi-013-multi-medium (multi, medium): one test per semantic check.

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
    assert (APP / 'step1/storm_dune.txt').is_file()


def test_step1_line_count():
    assert len(lines('step1/storm_dune.txt')) == 6


def test_step1_content_exact():
    assert read('step1/storm_dune.txt') == 'GARNET RAVEN\nPRISM SKY DAWN\nRADAR METEOR\nSPRUCE NORTH\nLAGOON LAGOON ATLAS FIELD\nVALLEY IVORY PLANET LINEN\n'


def test_step1_input_unchanged():
    assert read('step1/nebula_sunset.txt') == 'garnet raven\nprism sky dawn\nradar meteor\nspruce north\nlagoon lagoon atlas field\nvalley ivory planet linen\n'


def test_step2_output_exists():
    assert (APP / 'step2/maple.txt').is_file()


def test_step2_is_a_number():
    assert read('step2/maple.txt').strip().isdigit()


def test_step2_count_correct():
    assert int(read('step2/maple.txt')) == 2


def test_step2_log_unchanged():
    assert read('step2/web.log') == '2026-03-15T11:00:00 INFO 10.0.7.110 GET /shadow 200\n2026-03-09T12:01:00 ERROR 10.0.6.113 GET /carbon 200\n2026-03-19T05:02:00 INFO 10.0.7.110 GET /sky 200\n2026-03-12T19:03:00 INFO 10.0.1.48 GET /sky 301\n2026-03-17T01:04:00 INFO 10.0.1.48 GET /shadow 200\n2026-03-02T12:05:00 WARN 10.0.7.110 GET /sky 200\n2026-03-21T19:06:00 INFO 10.0.1.48 GET /meteor 301\n2026-03-08T06:07:00 INFO 10.0.7.110 GET /shadow 301\n2026-03-03T16:08:00 INFO 10.0.1.48 GET /glacier 500\n2026-03-01T01:09:00 INFO 10.0.6.113 GET /shadow 500\n2026-03-26T12:10:00 INFO 10.0.7.110 GET /shadow 500\n2026-03-09T09:11:00 WARN 10.0.1.48 GET /glacier 200\n2026-03-01T05:12:00 INFO 10.0.6.113 GET /shadow 200\n2026-03-10T10:13:00 ERROR 10.0.1.48 GET /carbon 301\n2026-03-15T09:14:00 INFO 10.0.7.110 GET /sky 301\n2026-03-02T03:15:00 INFO 10.0.6.113 GET /carbon 500\n2026-03-28T03:16:00 INFO 10.0.1.48 GET /glacier 500\n2026-03-22T21:17:00 INFO 10.0.1.48 GET /glacier 200\n2026-03-02T01:18:00 INFO 10.0.1.48 GET /meteor 500\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2'])
