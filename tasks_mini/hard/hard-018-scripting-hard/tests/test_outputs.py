"""Protected checks for task hard-018-scripting-hard (scripting, hard): one test per semantic check.

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


def test_script_exists():
    assert (APP / 'indigo.sh').is_file()


def test_script_executable():
    import os
    assert os.access(APP / 'indigo.sh', os.X_OK)


def test_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('indigo meadow meteor tundra orbit\nridge silver bloom maple horizon\nsage onyx shadow coral\nhazel lantern willow orbit desert\nanchor orchid cable silver\ndawn cotton badge\nwinter spruce nickel copper\ncobalt kettle topaz\noak beacon\n')
    assert run(['bash', 'indigo.sh', f.name]).stdout.strip() == 'indigo meadow meteor tundra orbit'


def test_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('juniper cable lotus lotus lantern mint\nsage quartz anchor ember\npine sapphire lagoon\nlantern radar comet nebula atlas\nbeacon frost willow orbit\natlas coral lemon beacon arrow marble\n')
    assert run(['bash', 'indigo.sh', f.name]).stdout.strip() == 'juniper cable lotus lotus lantern mint'


def test_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('border candle orchid atlas ridge echo\ncherry sapphire carbon violet saffron granite\n\n\ncandle ember valley\nwalnut stone nickel crystal saffron\n')
    assert run(['bash', 'indigo.sh', f.name]).stdout.strip() == 'cherry sapphire carbon violet saffron granite'
