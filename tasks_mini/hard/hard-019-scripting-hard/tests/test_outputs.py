"""Protected checks for task hard-019-scripting-hard (scripting, hard): one test per semantic check.

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
    assert (APP / 'orchid.sh').is_file()


def test_script_executable():
    import os
    assert os.access(APP / 'orchid.sh', os.X_OK)


def test_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('hazel hazel amber\nsky falcon\nprism reef solar\n')
    assert run(['bash', 'orchid.sh', f.name]).stdout.strip() == 'hazel hazel amber'


def test_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('lotus nebula frost sky\nocean orchid horizon\nbasil galaxy hazel\nocean dune orchid falcon salt lemon\nvalley spruce canyon raven\ncanyon moss summit topaz silver\n')
    assert run(['bash', 'orchid.sh', f.name]).stdout.strip() == 'ocean dune orchid falcon salt lemon'


def test_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('orchid ocean amber\nkettle lunar prism\n\n\ncotton pine dune mirror cotton\ngarnet moss marble valley\nslate falcon coral slate\n')
    assert run(['bash', 'orchid.sh', f.name]).stdout.strip() == 'cotton pine dune mirror cotton'
