"""The pictures the README and notebook 00 show before anything runs, drawn by code (SVG text, no plotting
library), so that a change to the loop is a change to a function and a test.

    python -m rsi_lite.teach.figures            # writes docs/img/loop.svg

`loop_svg` draws the five phases, what each one does, the critic handed from RPR-1 to RPR-2, and under each phase
a row of numbers the caller passes (by default none: the README's picture carries the paper's reported means and
the kit's measured `core` row, `kit_core` from docs/results/, both passed in by `main` with their sources in the
caption).
"""

from __future__ import annotations

import argparse
from html import escape
from pathlib import Path

PHASES = [
    ("Base", "the model as it is", ["evaluate only"]),
    ("RSR-1", "Recursive Self-Rewrite", ["solve under helped harnesses", "runbook, review (a gate)",
                                         "re-solve under the plain one", "strip guidance, SFT the actor"]),
    ("RPR-1", "Recursive Policy Refinement", ["critic warm-up (actor frozen)", "critic-only steps (paper 4, kit 1)",
                                              "joint PPO: TB-GAE, SPR,", "ratio clip [0.7, 6.0]"]),
    ("RSR-2", "Self-Rewrite again", ["the same, by RPR-1's actor", "(the critic is left alone)"]),
    ("RPR-2", "Refinement again", ["RPR-1's critic (no warm-up)", "critic-only steps, then joint", "a 5x lower actor rate"]),
]
"""(name, what it is, what it does, one line each): the loop of DESIGN.md and the paper's five retained checkpoints."""

PAPER_MEAN = ["20.68", "34.25", "44.50", "48.75", "50.58"]
"""The paper's mean success over four Terminal-Bench suites per phase (reported: docs/paper.md)."""


def kit_core(stages_csv: Path | None = None) -> list[str]:
    """The kit's `core` Mean@k per phase (two decimals, "" for a phase the run has not reached) from the committed
    summaries of its latest `cpu` run (`docs/results/stages.csv`, `rsi_lite.teach.results`): the picture moves
    with them."""
    import csv

    from .results import RESULTS

    with open(stages_csv or RESULTS / "stages.csv") as f:
        core = {r["stage"]: 100 * float(r["success"]) for r in csv.DictReader(f)
                if r["suite"] == "core" and r["kind"] == "stage"}
    return [f"{core[name]:.2f}" if name in core else "" for name, _, _ in PHASES]

BOX_W, BOX_H, GAP, TOP, LEFT = 170, 150, 36, 40, 20
COLOURS = {"Base": "#eeeeee", "RSR": "#d9ecff", "RPR": "#ffe8cc"}


def _text(x: float, y: float, s: str, size: int = 12, weight: str = "normal", anchor: str = "middle",
          colour: str = "#222") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="{weight}" text-anchor="{anchor}" '
            f'fill="{colour}" font-family="Helvetica, Arial, sans-serif">{escape(s)}</text>')


def loop_svg(rows: list[tuple[str, list[str]]] | None = None) -> str:
    """The five-phase loop as an SVG document. `rows`: (label, five values) drawn under the phases."""
    rows = rows or []
    n = len(PHASES)
    width = LEFT * 2 + n * BOX_W + (n - 1) * GAP + 130
    height = TOP + BOX_H + 70 + 24 * len(rows) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#444"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           _text(LEFT, 22, "Terminal-RSI: five phases, two cycles (cycle one: Base -> RPR-1; cycle two: -> RPR-2)",
                 14, "bold", "start")]
    xs = [LEFT + 130 + i * (BOX_W + GAP) for i in range(n)]
    for i, (name, what, does) in enumerate(PHASES):
        x = xs[i]
        out.append(f'<rect x="{x}" y="{TOP}" width="{BOX_W}" height="{BOX_H}" rx="10" '
                   f'fill="{COLOURS[name[:3] if name != "Base" else "Base"]}" stroke="#555"/>')
        out.append(_text(x + BOX_W / 2, TOP + 24, name, 16, "bold"))
        out.append(_text(x + BOX_W / 2, TOP + 42, what, 11, "normal", colour="#555"))
        for k, line in enumerate(does):
            out.append(_text(x + BOX_W / 2, TOP + 66 + 17 * k, line, 11))
        if i:
            out.append(f'<line x1="{xs[i - 1] + BOX_W}" y1="{TOP + BOX_H / 2}" x2="{x - 2}" y2="{TOP + BOX_H / 2}" '
                       'stroke="#444" stroke-width="2" marker-end="url(#arrow)"/>')
    # the critic, carried from RPR-1 over RSR-2 into RPR-2
    a, b = xs[2] + BOX_W / 2, xs[4] + BOX_W / 2
    y0 = TOP + BOX_H
    out.append(f'<path d="M {a} {y0} C {a} {y0 + 45}, {b} {y0 + 45}, {b} {y0 + 2}" fill="none" stroke="#c60" '
               'stroke-width="2" stroke-dasharray="6 4" marker-end="url(#arrow)"/>')
    out.append(_text((a + b) / 2, y0 + 48, "the critic is inherited, not re-initialised", 11, colour="#c60"))
    for r, (label, values) in enumerate(rows):
        y = y0 + 78 + 24 * r
        out.append(_text(LEFT, y, label, 12, "bold", "start"))
        for i, v in enumerate(values):
            out.append(_text(xs[i] + BOX_W / 2, y, v, 13))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> Path:
    p = argparse.ArgumentParser(description="Draw docs/img/loop.svg (the five-phase loop).")
    p.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "docs" / "img" / "loop.svg"))
    args = p.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(loop_svg([("paper: mean of 4 suites, %", PAPER_MEAN), ("kit: core, % (cpu run)", kit_core())]))
    return out


if __name__ == "__main__":
    print(main())
