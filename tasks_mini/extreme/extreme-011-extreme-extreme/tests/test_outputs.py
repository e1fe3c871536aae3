"""Protected checks for task extreme-011-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_script_exists():
    assert (APP / 'step1/basil.sh').is_file()


def test_step1_script_executable():
    import os
    assert os.access(APP / 'step1/basil.sh', os.X_OK)


def test_step1_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('iris copper\nsapphire valley\ncipher harbor granite winter\npolar oak atlas slate maple beacon\ncloud storm dawn lemon\nwillow winter jade iris bloom\nlotus sapphire lagoon moss summit\ngalaxy atlas cherry forest canyon cloud\n')
    assert run(['bash', 'step1/basil.sh', f.name]).stdout.strip() == 'galaxy atlas cherry forest canyon cloud'


def test_step1_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('comet cipher willow\ncable lemon meteor\nshadow kettle polar velvet\npebble sky\nstorm lotus\n')
    assert run(['bash', 'step1/basil.sh', f.name]).stdout.strip() == 'shadow kettle polar velvet'


def test_step1_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('maple cipher\njasmine topaz oak desert atlas\n\n\nharbor raven\nsunset garnet kettle violet storm\nanchor orbit winter onyx cipher orbit\nsage copper frost island orchid\n')
    assert run(['bash', 'step1/basil.sh', f.name]).stdout.strip() == 'anchor orbit winter onyx cipher orbit'


def test_step2_script_runs_cleanly():
    (APP / 'step2/birch.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/galaxy.sh'])
    assert r.returncode == 0, r.stderr


def test_step2_output_written():
    (APP / 'step2/birch.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/galaxy.sh'])
    assert (APP / 'step2/birch.txt').is_file()


def test_step2_output_correct():
    (APP / 'step2/birch.txt').unlink(missing_ok=True)
    r = run(['bash', 'step2/galaxy.sh'])
    assert read('step2/birch.txt') == 'row 1: stone north willow tundra\nrow 2: horizon walnut tundra fern\nrow 3: pebble pebble cable apple\nrow 4: cotton orbit frost field breeze jade\nrow 5: dawn apple robin moss\n'


def test_step2_line_count():
    (APP / 'step2/birch.txt').unlink(missing_ok=True)
    run(['bash', 'step2/galaxy.sh'])
    assert len(lines('step2/birch.txt')) == 5


def test_step2_reads_input_file():
    assert 'field_atlas.txt' in read('step2/galaxy.sh')


def test_step3_output_exists():
    assert (APP / 'step3/cedar_ivory.txt').is_file()


def test_step3_three_lines():
    assert len(lines('step3/cedar_ivory.txt')) == 3


def test_step3_format_word_count():
    for line in lines('step3/cedar_ivory.txt'):
        w, c = line.split()
        assert c.isdigit()


def test_step3_top_word():
    assert lines('step3/cedar_ivory.txt')[0].split() == ['spruce', '24']


def test_step3_content_exact():
    assert read('step3/cedar_ivory.txt') == 'spruce 24\nanchor 15\nmeadow 11\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step2', 'step3'])
