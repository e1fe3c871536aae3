"""Small views for notebooks: a trajectory's tokens coloured by what the loss sees."""

from __future__ import annotations

import html

COLORS = {1: "#c8f7c5", 0: "#eeeeee"}


def mask_html(tokenizer, traj, max_tokens: int = 3000) -> str:
    """Every token of `traj` as a span: green where action_mask is 1 (the model's own tokens), grey elsewhere."""
    return ids_mask_html(tokenizer, traj.token_ids, traj.action_mask, max_tokens)


def ids_mask_html(tokenizer, ids: list[int], mask: list[int], max_tokens: int = 3000) -> str:
    """Token ids as coloured spans by their 0/1 mask (a trajectory's action mask, an SFT example's loss mask)."""
    parts = []
    for tid, m in list(zip(ids, mask))[:max_tokens]:
        text = tokenizer.decode([tid], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        shown = html.escape(text).replace("\n", "↵<br>")
        parts.append(f'<span style="background:{COLORS[m]};border-right:1px solid #fff" title="{tid}">{shown}</span>')
    legend = ('<div style="margin-bottom:6px"><span style="background:#c8f7c5">model tokens (mask 1)</span> '
              '<span style="background:#eeeeee">prompt, observations, control (mask 0)</span></div>')
    return legend + '<div style="font-family:monospace;font-size:12px;line-height:1.6">' + "".join(parts) + "</div>"


def transcript(traj, width: int = 300) -> str:
    """The messages of a trajectory, one line each, with their kinds."""
    return "\n".join(f"[{m['kind']:11}] {m['content'][:width]!r}" for m in traj.messages)


BASE_HARNESSES_CORE = {
    # harness: (Mean@3 on `core` in %, successes, episodes, process reward)
    "plain": (0.00, 0, 135, 0.291),
    "state_machine": (2.96, 4, 135, 0.370),
    "exemplar": (7.41, 10, 135, 0.413),
    "verifier_feedback": (11.85, 16, 135, 0.436),
}
"""Base (the bundled model, no training) on all 45 `core` tasks, k = 3, temperature 0.6, 3 turns of 64 tokens, under
each harness: `rsi-lite eval --checkpoint base --suite core --harness H --k 3 --max-turns 3 --max-new-tokens 64`
(docs/history.md, the table "With the 21 examples and their tie order of now"). Copied as measured."""


def harness_figure(rows: dict | None = None):
    """A plotly bar chart of success per harness (default: `BASE_HARNESSES_CORE`), each bar labelled with its
    successes out of its episodes, the process reward on the second axis."""
    import plotly.graph_objects as go

    rows = rows or BASE_HARNESSES_CORE
    names = list(rows)
    fig = go.Figure([
        go.Bar(x=names, y=[rows[n][0] for n in names], name="success, % (Mean@3)",
               text=[f"{rows[n][1]}/{rows[n][2]}" for n in names], textposition="outside"),
        go.Scatter(x=names, y=[rows[n][3] for n in names], name="process reward (mean P/N)", yaxis="y2",
                   mode="markers", marker_size=12),
    ])
    fig.update_layout(title="Base on core (45 tasks x 3, T 0.6): what each harness gets from the same model",
                      yaxis=dict(title="success, %", rangemode="tozero"),
                      yaxis2=dict(title="process reward", overlaying="y", side="right", range=[0, 1]),
                      height=380, margin=dict(t=50))
    return fig


KIT_FUNNEL_RSR_CORE = {"discovery_episodes": 312, "discovery_successes": 142, "source_successes": 91, "runbooks": 91,
                       "approved": 91, "resolves": 182, "resolve_successes": 106, "examples": 66}
"""The self-rewrite of `configs/rsr-core.json` from Base (the cpu profile's RSR-1 recipe: 78 easy pool tasks of four
families, exemplar and verifier-feedback discovery), its `funnel.json` as written: the `start` part of
`python -m rsi_lite.bench.learns --config configs/learns.json` (code of 6685843; docs/experiments.md, 2026-12-06)."""

FUNNEL_STEPS = [("discovery_episodes", "discovery episodes"), ("discovery_successes", "discovery successes"),
                ("source_successes", "successes kept (at most 2 a task)"), ("approved", "runbooks approved"),
                ("resolves", "guided re-solves"), ("resolve_successes", "re-solves passed"),
                ("examples", "clean training examples")]
"""The funnel's steps in order, as `funnel_figure` draws them: (key of funnel.json, label)."""


def funnel_figure(funnels: dict[str, dict]):
    """A plotly chart of self-rewrite funnels side by side: for each (name -> funnel.json dict) and each step of
    `FUNNEL_STEPS`, its count as a share of that funnel's discovery episodes (so a one-task run and the kit's
    78-task one read on one axis), each bar labelled with the count itself."""
    import plotly.graph_objects as go

    labels = [label for _, label in FUNNEL_STEPS]
    bars = []
    for name, f in funnels.items():
        first = f.get("discovery_episodes") or 1
        counts = [int(f.get(key, 0)) for key, _ in FUNNEL_STEPS]
        bars.append(go.Bar(y=labels, x=[100 * c / first for c in counts], name=name, orientation="h",
                           text=[str(c) for c in counts], textposition="outside"))
    fig = go.Figure(bars)
    fig.update_layout(barmode="group", xaxis_title="% of the funnel's discovery episodes (label: the count)",
                      yaxis=dict(autorange="reversed"), height=120 + 60 * len(FUNNEL_STEPS), margin=dict(t=40),
                      title="What survives each step of the self-rewrite")
    return fig


KIT_CORE_VERDICTS = {
    # checkpoint: (Mean@3 success on `core` in %, process reward: the mean share of checks passed)
    "Base": (0.00, 0.291),
    "RSR-1 (runs/rsr12)": (30.37, 0.548),
}
"""What the verifier said of the kit's checkpoints on all 45 `core` tasks, plain harness, k = 3, temperature 0.6:
`rsi-lite eval --checkpoint C --suite core --harness plain --k 3 --max-turns 3 --max-new-tokens 64` (docs/history.md,
the runs/rsr12 entry and its table beside the ablation). Copied as measured."""


def checks_figure(check_counts: dict[str, list[int]], verdicts: dict | None = None):
    """Two panels: how many checks the tasks of each family have (`tasks.family_check_counts`, computed from the
    suites), and the kit's measured success against process reward per checkpoint (default `KIT_CORE_VERDICTS`):
    partial credit exists long before the first success."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    verdicts = verdicts or KIT_CORE_VERDICTS
    fig = make_subplots(rows=1, cols=2, subplot_titles=("checks per task, by family (the suites)",
                                                        "the kit's checkpoints on core: success vs checks passed"))
    for fam, counts in sorted(check_counts.items()):
        fig.add_trace(go.Box(y=counts, name=fam, boxpoints="all", showlegend=False), row=1, col=1)
    names = list(verdicts)
    fig.add_trace(go.Bar(x=names, y=[verdicts[n][0] for n in names], name="success, %"), row=1, col=2)
    fig.add_trace(go.Bar(x=names, y=[100 * verdicts[n][1] for n in names], name="checks passed, % (process reward)"),
                  row=1, col=2)
    fig.update_layout(height=400, barmode="group", margin=dict(t=60))
    fig.update_yaxes(title_text="checks", row=1, col=1)
    fig.update_yaxes(title_text="%", row=1, col=2)
    return fig


KIT_CREDIT_PPO_S0 = {
    # kind: (successful episodes, share of their action tokens with a negative whitened advantage under
    #        the critic's token values, under turn values, under a constant baseline)
    "Copy the file X to": (11, 0.21, 0.11, 0.00),
    "Count the data rows of": (13, 0.28, 0.17, 0.00),
    "Count the lines of X": (6, 0.15, 0.12, 0.00),
    "Create a file named X": (2, 0.04, 0.00, 0.00),
    "In the file X replace": (27, 0.11, 0.04, 0.00),
    "Rename the file X to": (17, 0.24, 0.09, 0.00),
    "Save the first X lines": (22, 0.09, 0.03, 0.00),
    "Write the text X into": (18, 0.08, 0.09, 0.00),
}
"""The successes of the last six PPO steps of bench.learns' `ppo` run (seed 0), and what its final critic's TB-GAE
does to their tokens: `python -m rsi_lite.bench.credit --run runs/learns/ppo-s0/rpr-1 --pool runs/learns/pool
--steps 10:` (docs/experiments.md, 2026-12-06). Copied as printed."""

KIT_EV_PPO_S0 = [0.00, 0.00, 0.01, 0.15, -0.07, -0.03, 0.08, -0.15, 0.04, 0.09, 0.09, 0.13, -0.81, 0.16, 0.03, 0.25]
"""That run's critic: explained variance before each update (warm-up, calibration, then 14 joint steps), the
`losses/explained_variance_before` of runs/learns/ppo-s0/rpr-1/metrics.jsonl (docs/experiments.md, 2026-12-06)."""


def credit_figure(rows: dict | None = None):
    """A plotly chart: per kind, the share of a success's action tokens pushed down (negative whitened advantage)
    under each baseline (default `KIT_CREDIT_PPO_S0`)."""
    import plotly.graph_objects as go

    rows = rows or KIT_CREDIT_PPO_S0
    kinds = list(rows)
    names = ("the critic, every token (the paper's)", "the critic, once per turn", "one constant (no critic)")
    fig = go.Figure([go.Bar(x=kinds, y=[100 * rows[k][i + 1] for k in kinds], name=name)
                     for i, name in enumerate(names)])
    fig.update_layout(barmode="group", yaxis_title="% of a success's tokens with advantage < 0", height=400,
                      title="Successes the update partly unlearns: bench.learns, ppo, seed 0, its final critic",
                      margin=dict(t=50))
    return fig


def last_turn_rows(path, stage: str = "rpr-1", seed: str | None = None) -> dict:
    """From `docs/results/turns.csv` (`teach.results`): the last turn the stage's rows reach, per PPO
    step ({"steps": [(step, unparsed, done), ...]}) and per held-out checkpoint ({"heldout": {checkpoint:
    (unparsed, done)}}), shares in 0..1, for `turns_figure`. `seed`: the first seed in the file by default."""
    import csv

    with open(path) as f:
        rows = list(csv.DictReader(f))
    seed = seed if seed is not None else rows[0]["seed"]
    mine = [r for r in rows if r["seed"] == seed and r["stage"] == stage]
    last = max(int(r["turn"]) for r in mine)
    pick = [r for r in mine if int(r["turn"]) == last]
    steps = [(int(r["where"].split("-")[1]), float(r["unparsed"]), float(r["done"]))
             for r in pick if r["where"].startswith("step-")]
    held = {r["where"].split(":", 1)[1]: (float(r["unparsed"]), float(r["done"]))
            for r in pick if r["where"].startswith("heldout:")}
    return {"seed": seed, "stage": stage, "turn": last, "steps": sorted(steps), "heldout": held}


def turns_figure(rows: dict):
    """A plotly chart of `last_turn_rows`: per PPO step, the share of last replies that said TASK COMPLETE and the
    share the harness could not parse; the held-out checkpoints as points at the right."""
    import plotly.graph_objects as go

    x = [s for s, _, _ in rows["steps"]]
    fig = go.Figure([go.Scatter(x=x, y=[100 * d for _, _, d in rows["steps"]], name="said TASK COMPLETE",
                                mode="lines+markers"),
                     go.Scatter(x=x, y=[100 * m for _, m, _ in rows["steps"]], name="ran nothing (unparsed)",
                                mode="lines+markers")])
    right = (max(x) + 2) if x else 0
    for i, (ck, (m, d)) in enumerate(rows["heldout"].items()):
        fig.add_trace(go.Scatter(x=[right + i], y=[100 * d], mode="markers", marker_symbol="diamond",
                                 marker_size=11, name=f"held-out, {ck}: done"))
        fig.add_trace(go.Scatter(x=[right + i], y=[100 * m], mode="markers", marker_symbol="x",
                                 marker_size=11, name=f"held-out, {ck}: unparsed"))
    fig.update_layout(xaxis_title="PPO step (held-out checkpoints at the right)", height=400,
                      yaxis_title=f"% of turn-{rows['turn']} replies", margin=dict(t=50),
                      title=f"The last turn's replies over {rows['stage']} (seed {rows['seed']})")
    return fig


def heldout_figure(pairs: list[dict], title: str = ""):
    """A plotly bar chart of `teach.results.heldout_pairs` for one phase: each kind's success on its fresh instances
    before (the incoming checkpoint) and after the phase, bars labelled with successes out of episodes."""
    import plotly.graph_objects as go

    kinds = [p["kind"].split(": ", 1)[-1] for p in pairs]
    fig = go.Figure()
    for side, name in (("before", pairs[0].get("before_stage", "before") if pairs else "before"),
                       ("after", pairs[0]["phase"] if pairs else "after")):
        won = [p[side] for p in pairs]
        fig.add_trace(go.Bar(y=kinds, x=[100 * s / n for s, n in won], orientation="h", name=name,
                             text=[f"{s}/{n}" for s, n in won], textposition="outside"))
    before, after = (sum(p[side][0] for p in pairs) for side in ("before", "after"))
    n = sum(p["before"][1] for p in pairs)
    fig.update_layout(barmode="group", xaxis=dict(title="success on fresh instances, %", range=[0, 115]),
                      yaxis=dict(autorange="reversed"), height=120 + 60 * len(pairs), margin=dict(t=60, l=10),
                      title=title or f"Held-out kinds, {before}/{n} -> {after}/{n} episodes solved")
    return fig


def critic_ev_figure(steps: list[int], ev: dict[str, list], title: str, floor: float = -1.0):
    """Explained variance before each update, one line per critic (`ev`: name -> a value or None per step). A value
    under `floor` (a batch of a few tasks whose returns barely vary makes EV explode: -20 was seen) is drawn at the
    floor as an open marker labelled with its value, so the rest of the curves stay readable."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, values in ev.items():
        shown = [None if v is None else max(v, floor) for v in values]
        low = [v is not None and v < floor for v in values]
        fig.add_trace(go.Scatter(x=steps, y=shown, name=f"{name} critic", mode="lines+markers+text",
                                 marker=dict(symbol=["circle-open" if x else "circle" for x in low], size=9),
                                 text=[f"{v:.1f}" if x else "" for v, x in zip(values, low)],
                                 textposition="top center"))
    fig.update_layout(title=title, xaxis_title="step", yaxis=dict(title="explained variance", range=[floor - 0.1, 1]),
                      height=330, margin=dict(t=50))
    return fig
