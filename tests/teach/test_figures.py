"""The loop picture (`rsi_lite.teach.figures`): well-formed SVG with the five phases in order, the critic's hand-off,
the rows of numbers under their phases, and the committed docs/img/loop.svg equal to what the code draws.
Run: pytest tests/teach/test_figures.py
"""

import xml.etree.ElementTree as ET

from rsi_lite.teach.figures import PAPER_MEAN, PHASES, kit_core, loop_svg, main

from ..conftest import REPO

NS = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[tuple[float, float, str]]:
    root = ET.fromstring(svg)
    return [(float(t.get("x")), float(t.get("y")), t.text) for t in root.iter(f"{NS}text")]


def test_the_five_phases_left_to_right_with_arrows_and_the_critic_handoff():
    svg = loop_svg()
    names = [t for t in texts(svg) if t[2] in {p[0] for p in PHASES}]
    assert [n for _, _, n in sorted(names)] == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    root = ET.fromstring(svg)
    assert len([e for e in root.iter(f"{NS}line") if e.get("marker-end")]) == 4
    assert any("inherited" in s for _, _, s in texts(svg))
    assert len(list(root.iter(f"{NS}path"))) == 2  # the arrow head's and the critic's


def test_each_row_value_sits_under_its_phase():
    svg = loop_svg([("a row", ["1", "2", "3", "4", "5"])])
    t = texts(svg)
    phase_x = {s: x for x, _, s in t if s in {p[0] for p in PHASES}}
    for name, value in zip([p[0] for p in PHASES], "12345"):
        (x,) = [x for x, _, s in t if s == value]
        assert x == phase_x[name]


def test_the_committed_picture_is_what_the_code_draws(tmp_path):
    out = main(["--out", str(tmp_path / "loop.svg")])
    drawn = out.read_text()
    assert PAPER_MEAN[-1] in drawn and kit_core()[1] in drawn
    assert (REPO / "docs" / "img" / "loop.svg").read_text() == drawn, "run: python -m rsi_lite.teach.figures"


def test_the_kits_row_is_the_committed_runs_core_success_per_phase(tmp_path):
    path = tmp_path / "stages.csv"
    path.write_text("seeds,stage,kind,retained,suite,success,runs,process_reward\n"
                    "0,Base,stage,False,core,0.0,0.0,0.3\n0,RSR-1,stage,True,core,0.3111,0.3111,0.5\n"
                    "0,RSR-1,stage,True,val,0.9,0.9,0.5\n0,Direct PPO,control,,core,0.5,0.5,0.1\n")
    assert kit_core(path) == ["0.00", "31.11", "", "", ""]
