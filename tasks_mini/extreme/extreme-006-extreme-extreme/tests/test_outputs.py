"""Protected checks for task extreme-006-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_still_parses():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert cp.sections() == ['server', 'database', 'queue']


def test_step1_target_changed():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert cp['server']['timeout'] == '262'


def test_step1_other_sections_unchanged():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert cp['database']['timeout'] == '2'
    assert cp['queue']['timeout'] == '305'


def test_step1_enabled_flags_kept():
    import configparser
    cp = configparser.ConfigParser()
    cp.read_string(read('step1/settings.ini'))
    assert all('enabled' in cp[s] for s in ['server', 'database', 'queue'])


def test_step2_script_exists():
    assert (APP / 'step2/willow.sh').is_file()


def test_step2_script_executable():
    import os
    assert os.access(APP / 'step2/willow.sh', os.X_OK)


def test_step2_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('cherry basil tulip nebula spark\ncedar flint spruce\ncotton echo\nnorth spruce winter anchor reef moss\n')
    assert run(['bash', 'step2/willow.sh', f.name]).stdout.strip() == 'north spruce winter anchor reef moss'


def test_step2_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('lagoon olive quartz juniper\namber harbor\nsolar radar velvet solar garnet jade\narrow cherry\nmaple linen border sage cloud\nraven dawn sky jade breeze kettle\n')
    assert run(['bash', 'step2/willow.sh', f.name]).stdout.strip() == 'solar radar velvet solar garnet jade'


def test_step2_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('walnut stone salt\ndelta tundra iris basil\n\n\nbeacon cable echo\niris valley amber mirror granite marble\npolar sapphire flint ridge glacier shadow\ndelta prism desert frost beacon\nmeadow violet river valley solar sage\nquill sky raven carbon falcon\nwinter orbit velvet summit frost\n')
    assert run(['bash', 'step2/willow.sh', f.name]).stdout.strip() == 'polar sapphire flint ridge glacier shadow'


def test_step3_md_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'md').iterdir()) == ['basil_onyx.md', 'tundra_crystal.md', 'walnut_bloom.md']


def test_step3_log_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'log').iterdir()) == ['delta_iris.log', 'tulip_linen.log']


def test_step3_csv_folder():
    assert sorted(x.name for x in (APP / 'step3/inbox' / 'csv').iterdir()) == ['ivory_spark.csv', 'salt_prism.csv']


def test_step3_no_loose_files():
    assert not [x for x in (APP / 'step3/inbox').iterdir() if x.is_file()]


def test_step3_contents_intact():
    assert read('step3/inbox/md/basil_onyx.md') == 'willow indigo winter\n'
    assert read('step3/inbox/md/tundra_crystal.md') == 'field tide slate\n'
    assert read('step3/inbox/md/walnut_bloom.md') == 'pebble dune jade\n'
    assert read('step3/inbox/log/delta_iris.log') == 'flint galaxy cobalt\n'
    assert read('step3/inbox/log/tulip_linen.log') == 'planet indigo mint\n'
    assert read('step3/inbox/csv/salt_prism.csv') == 'quartz flint ember\n'
    assert read('step3/inbox/csv/ivory_spark.csv') == 'horizon plum cloud\n'


def test_step3_other_file_untouched():
    assert read('step3/tulip_granite.md') == '# meteor mirror\nkeep this file as it is\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step3'])
