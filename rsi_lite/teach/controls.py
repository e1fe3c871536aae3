"""Notebook 06's questions about the loop's controls, answered from a run's report (or from the kit's measured
figures, which the notebook copies with their source), and the stage table drawn with the spread of each
evaluation's runs; notebook 00's picture of the direct-PPO control against PPO after the self-rewrite
(`bootstrap_figure`).

Every answer follows the report's rule (`report.claims`): a difference counts only when it is larger than the
run-to-run spread of the two rows it compares.
"""

from __future__ import annotations

from statistics import mean

from ..loop.phases import CONTROLS, STAGES
from ..report.claims import _gain_of

DIRECT, RESET, FDR = (CONTROLS[c][0] for c in ("direct-ppo", "critic-reset", "reward-fdr"))

QUESTIONS = {
    "direct-ppo": "PPO straight from Base, for as many joint steps as RPR-1 and RPR-2 together, lifts `core` above "
                  "Base by more than the run-to-run spread",
    "critic-reset": "RPR-2 with a fresh critic explains less of the returns' variance at its first update than "
                    "RPR-2 with the critic inherited from RPR-1",
    "critic-reset-core": "RPR-2 with a fresh critic ends lower on `core` than with the inherited one, by more than "
                         "the spread",
    "reward-fdr": "RPR-2 trained on FDR ends lower on `core` than RPR-2 trained on SPR, by more than the spread",
}
"""The predict-then-check questions of notebook 06, one per control (two for the critic reset), each True or False."""


def stage_runs(rep: dict) -> dict[str, dict[str, list[float]]]:
    """Row label -> suite -> the success (%) of each evaluation run, for every stage and control of a report
    (`report.write.build`)."""
    return {r["stage"]: {s: [100 * x for x in (v.get("runs") or [v["success"]])] for s, v in r["suites"].items()}
            for r in rep["stages"] + list(rep["controls"].values())}


def first_ev(rep: dict) -> dict[str, float]:
    """RPR stage directory -> the critic's explained variance before its first update (the first seed's curves)."""
    curves = next(iter(rep["curves"].values()), {})
    return {name: c["losses/explained_variance_before"][0] for name, c in curves.items()
            if c.get("losses/explained_variance_before") and c["losses/explained_variance_before"][0] is not None}


def _gain(runs: dict, a: str, b: str, suite: str = "core") -> tuple[float, float] | None:
    """(b - a, the spread) in points, or None where a row or its suite is missing."""
    if suite not in runs.get(a, {}) or suite not in runs.get(b, {}):
        return None
    ra, rb = ({"success": mean(runs[x][suite]) / 100, "runs": [v / 100 for v in runs[x][suite]]} for x in (a, b))
    return _gain_of(ra, rb)


def _said(g: tuple[float, float] | None, a: str, b: str) -> str | None:
    return None if g is None else f"'{b}' minus '{a}' on core: {g[0]:+.1f} points, spread {g[1]:.1f}"


def control_answers(runs: dict, ev: dict, source: str) -> dict[str, dict]:
    """Each question of `QUESTIONS` answered (True / False; None where the rows it needs are missing) from `runs`
    (`stage_runs`) and `ev` (`first_ev`: 'rpr-2' and 'rpr-2-critic-reset'), with its figures and `source`."""
    out = {}

    def put(key, g, answer, figures):
        out[key] = {"question": QUESTIONS[key], "answer": None if g is None else answer, "figures": figures,
                    "source": source}

    g = _gain(runs, "Base", DIRECT)
    put("direct-ppo", g, g is not None and g[0] > g[1], _said(g, "Base", DIRECT))
    inherited, reset = ev.get("rpr-2"), ev.get(CONTROLS["critic-reset"][1])
    both = None if inherited is None or reset is None else (inherited, reset)
    put("critic-reset", both, both is not None and reset < inherited,
        None if both is None else f"explained variance at the first update: {reset:.2f} fresh, {inherited:.2f} "
                                  f"inherited")
    for key, label in (("critic-reset-core", RESET), ("reward-fdr", FDR)):
        g = _gain(runs, label, "RPR-2")
        put(key, g, g is not None and g[0] > g[1], _said(g, label, "RPR-2"))
    return out


def stage_figure(panels: dict[str, dict], suites=("core", "val")):
    """Success per stage (%), one panel per source (`panels`: title -> `stage_runs`), the bar at the mean of the
    evaluation runs and a line from the lowest run to the highest: a difference inside that line is noise."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    order = STAGES + [label for label, _ in CONTROLS.values()]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=list(panels), shared_yaxes=True)
    colours = {"core": "#1f77b4", "val": "#ff7f0e"}
    for col, runs in enumerate(panels.values(), start=1):
        labels = [s for s in order if s in runs]
        for suite in suites:
            have = [s for s in labels if suite in runs[s]]
            m = [mean(runs[s][suite]) for s in have]
            fig.add_trace(go.Bar(x=have, y=m, name=suite, legendgroup=suite, showlegend=col == 1,
                                 marker_color=colours.get(suite),
                                 error_y=dict(type="data", symmetric=False,
                                              array=[max(runs[s][suite]) - v for s, v in zip(have, m)],
                                              arrayminus=[v - min(runs[s][suite]) for s, v in zip(have, m)])),
                          row=1, col=col)
    fig.update_layout(barmode="group", yaxis_title="success, % (mean of the runs; bars: lowest to highest run)")
    return fig


def bootstrap_figure(direct_probes: list[dict], direct_steps: list[dict], after_steps: list[dict],
                     after: str = "RPR-1"):
    """The bootstrapping argument on the kit's own files, batches against batches: left, PPO straight from Base,
    the share of each training batch that succeeded (`direct_steps`, rows of `teach.results.curve_rows`) and, as
    bars, of each probe of the pool (`direct_probes`, labelled successes/episodes, at the step it came before);
    right, PPO after RSR-1 (`after`), its training batches. Steps count the critic's warm-up (0) and calibration
    (1), the actor frozen, then the joint ones."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, subplot_titles=(
        "PPO from Base", f"PPO after RSR-1 ({after})"))
    fig.add_trace(go.Bar(x=[p["before_step"] for p in direct_probes],
                         y=[100 * p["successes"] / p["episodes"] for p in direct_probes],
                         text=[f"probe {p['successes']}/{p['episodes']}" for p in direct_probes],
                         textposition="outside", name="probe of the pool, solved", marker_color="#d62728",
                         opacity=0.5), row=1, col=1)
    for col, rows in ((1, direct_steps), (2, after_steps)):
        fig.add_trace(go.Scatter(x=[r["step"] for r in rows], y=[100 * r["success/mean"] for r in rows],
                                 mode="lines+markers", name="training batch, solved", marker_color="#2ca02c",
                                 showlegend=col == 1), row=1, col=col)
        fig.update_xaxes(title_text="step (0 warm-up, 1 calibration, then joint)", row=1, col=col)
    fig.update_yaxes(title_text="episodes solved, %", range=[0, 100], row=1, col=1)
    return fig
