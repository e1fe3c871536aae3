"""Protected checks for task extreme-003-extreme-extreme (extreme, extreme): one test per semantic check.

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
    assert (APP / 'step1/ridge_indigo.txt').is_file()


def test_step1_three_lines():
    assert len(lines('step1/ridge_indigo.txt')) == 3


def test_step1_format_word_count():
    for line in lines('step1/ridge_indigo.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step1_top_word():
    assert lines('step1/ridge_indigo.txt')[0].split() == ['silver', '21']


def test_step1_content_exact():
    assert read('step1/ridge_indigo.txt') == 'silver 21\ncandle 19\ngalaxy 9\n'


def test_step2_csv_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'csv').iterdir()) == ['nickel_meteor.csv', 'olive_tide.csv', 'orbit_walnut.csv']


def test_step2_json_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'json').iterdir()) == ['dune_beacon.json', 'garnet_prism.json', 'harbor_comet.json']


def test_step2_txt_folder():
    assert sorted(x.name for x in (APP / 'step2/inbox' / 'txt').iterdir()) == ['harbor_valley.txt', 'spruce_comet.txt']


def test_step2_no_loose_files():
    assert not [x for x in (APP / 'step2/inbox').iterdir() if x.is_file()]


def test_step2_contents_intact():
    assert read('step2/inbox/csv/nickel_meteor.csv') == 'ember juniper lantern\n'
    assert read('step2/inbox/csv/orbit_walnut.csv') == 'storm pine sky\n'
    assert read('step2/inbox/csv/olive_tide.csv') == 'fern kettle raven\n'
    assert read('step2/inbox/json/garnet_prism.json') == 'ivory tide tulip\n'
    assert read('step2/inbox/json/dune_beacon.json') == 'indigo ember bloom\n'
    assert read('step2/inbox/json/harbor_comet.json') == 'lunar lagoon pebble\n'
    assert read('step2/inbox/txt/spruce_comet.txt') == 'spark basil jade\n'
    assert read('step2/inbox/txt/harbor_valley.txt') == 'garnet maple north\n'


def test_step2_other_file_untouched():
    assert read('step2/comet_stone.md') == '# pine ivory\nkeep this file as it is\n'


def test_step3_valid_json():
    json.loads(read('step3/settings.json'))


def test_step3_workers_set():
    assert json.loads(read('step3/settings.json'))['limits']['workers'] == 493


def test_step3_feature_appended():
    assert json.loads(read('step3/settings.json'))['features'] == ['echo', 'linen', 'carbon', 'river']


def test_step3_rest_unchanged():
    d = json.loads(read('step3/settings.json'))
    assert d['service'] == {'name': 'tundra', 'port': 4199} and d['limits']['timeout'] == 451


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step2', 'step3'])
