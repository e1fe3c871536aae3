"""Protected checks for task extreme-000-extreme-extreme (extreme, extreme): one test per semantic check.

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


def test_step1_valid_json():
    json.loads(read('step1/settings.json'))


def test_step1_workers_set():
    assert json.loads(read('step1/settings.json'))['limits']['workers'] == 345


def test_step1_feature_appended():
    assert json.loads(read('step1/settings.json'))['features'] == ['cobalt', 'garden', 'basil', 'arrow']


def test_step1_rest_unchanged():
    d = json.loads(read('step1/settings.json'))
    assert d['service'] == {'name': 'shadow', 'port': 3895} and d['limits']['timeout'] == 325


def test_step2_script_exists():
    assert (APP / 'step2/indigo.sh').is_file()


def test_step2_script_executable():
    import os
    assert os.access(APP / 'step2/indigo.sh', os.X_OK)


def test_step2_hidden_input_1():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('valley juniper walnut field copper\nsummit arrow storm north meadow tide\ndesert stone onyx ocean lunar olive\n')
    assert run(['bash', 'step2/indigo.sh', f.name]).stdout.strip() == '3'


def test_step2_hidden_input_2():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('arrow cobalt tulip coral canyon plum\nhorizon zephyr tundra apple arrow border\nbloom atlas coral walnut harbor\ncopper sage cipher horizon oak galaxy\nbeacon topaz falcon marble ocean spark\nlotus horizon summit jasmine\nnickel coral cherry saffron amber badge\nslate coral harbor tulip lotus\n')
    assert run(['bash', 'step2/indigo.sh', f.name]).stdout.strip() == '8'


def test_step2_hidden_input_3():
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
        f.write('lemon comet tundra\ncotton zephyr island marble\n\n\nprism iris dune\nfrost ember velvet silver copper spruce\nisland nebula basil pepper tide\ntundra jasmine orchid\n')
    assert run(['bash', 'step2/indigo.sh', f.name]).stdout.strip() == '6'


def test_step3_output_exists():
    assert (APP / 'step3/filtered.csv').is_file()


def test_step3_header_kept():
    assert lines('step3/filtered.csv')[0] == 'name,city,amount'


def test_step3_row_count():
    assert len(lines('step3/filtered.csv')) == 7


def test_step3_all_above_threshold():
    assert all(int(l.split(',')[2]) > 57 for l in lines('step3/filtered.csv')[1:])


def test_step3_content_exact():
    assert read('step3/filtered.csv') == 'name,city,amount\noscar,lima,64\nsybil,delhi,94\nmallory,berlin,91\nfrank,dakar,85\nerin,lima,78\nalice,dakar,62\n'


def test_step3_input_unchanged():
    assert read('step3/frost_beacon.csv') == 'name,city,amount\noscar,lima,64\nsybil,delhi,94\nmallory,berlin,91\nwendy,cairo,2\nfrank,dakar,85\ntrent,lima,57\nrupert,cairo,1\ncarol,delhi,49\nerin,lima,78\ndave,dakar,28\nliam,cairo,56\nbob,lima,25\npeggy,delhi,6\nalice,dakar,62\n'


def test_inputs_unpacked():
    assert all((APP / d).is_dir() for d in ['step1', 'step3'])
