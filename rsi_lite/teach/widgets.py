"""Interactive widgets for the notebooks (ipywidgets + plotly): FDR vs SPR, GAE vs TB-GAE, per-turn rewards.

The curves are computed by plain functions (`reward_curves`, `advantage_curves`, `turn_reward_curves`) that the
tests call directly; the widgets only draw them. A plot lives in an `Output` widget and is
redrawn on every slider move (JupyterLab renders plotly through its bundled extension,
no network needed).
"""

from __future__ import annotations

from ..algos.advantages import tb_gae, terminal_rewards, token_gae
from ..algos.rewards import Outcome, fdr_reward, spr_reward


def reward_curves(total_checks: int, divisor: float, alpha: float) -> dict:
    """Reward against passed checks P = 0..total for a failure, and the success's reward, under FDR and SPR."""
    ps = list(range(total_checks + 1))
    return {
        "passed": ps,
        "fdr_failure": [fdr_reward(Outcome(0, p, total_checks, True), divisor) for p in ps],
        "spr_failure": [spr_reward(Outcome(0, p, total_checks, True), divisor, alpha) for p in ps],
        "fdr_success": fdr_reward(Outcome(1, total_checks, total_checks, True), divisor),
        "spr_success": spr_reward(Outcome(1, total_checks, total_checks, True), divisor, alpha),
    }


BATCH = [(1, 4, 4), (1, 6, 6), (0, 5, 6), (0, 5, 6), (0, 3, 5), (0, 2, 4), (0, 1, 6), (0, 0, 5)]
"""A batch of eight episodes of one family's tasks as (S, P, checks): two successes (one on a 4-check task), six
failures, two of which passed 5 of 6 checks. Made up to show the shapes, the sizes of the kit's tasks."""


def batch_advantages(batch=BATCH, divisor: float = 5.0, alpha: float = 0.5) -> dict:
    """Each episode's reward under FDR and SPR, and the advantage PPO would give its last action token: TB-GAE
    with a critic that predicts the batch's mean reward, whitened over the batch (one action token per episode,
    so the advantage is (r - mean) / std)."""
    import torch

    from ..algos.ppo import masked_whiten

    out = {"batch": list(batch)}
    mask = torch.ones(len(batch), 1, dtype=torch.long)
    for name, fn in (("fdr", lambda o: fdr_reward(o, divisor)), ("spr", lambda o: spr_reward(o, divisor, alpha))):
        r = torch.tensor([fn(Outcome(s, p, n, True)) for s, p, n in batch])
        values = torch.full((len(batch), 1), float(r.mean()))
        adv, _ = tb_gae(terminal_rewards(r, mask), values, mask, torch.ones(len(batch), dtype=torch.bool), 1.0, 1.0)
        out[name] = r.tolist()
        out[f"{name}_advantage"] = masked_whiten(adv, mask)[:, 0].tolist()
    return out


def reward_figure(c: dict):
    import plotly.graph_objects as go

    ps = c["passed"]
    fig = go.Figure([
        go.Scatter(x=ps, y=c["fdr_failure"], name="FDR, failure", mode="lines+markers"),
        go.Scatter(x=ps, y=c["spr_failure"], name="SPR, failure", mode="lines+markers"),
        go.Scatter(x=[ps[-1]], y=[c["fdr_success"]], name="FDR, success", mode="markers", marker_size=12),
        go.Scatter(x=[ps[-1]], y=[c["spr_success"]], name="SPR, success", mode="markers", marker_size=12,
                   marker_symbol="star"),
    ])
    fig.add_hline(y=1.0, line_dash="dot", annotation_text="a success's SPR")
    fig.update_layout(xaxis_title="checks passed (P)", yaxis_title="reward", height=360, margin=dict(t=30))
    return fig


def _show(out, fig) -> None:
    """Make the Output widget `out` show `fig` alone, in one state update. Not by capturing `fig.show()`
    (`with out:`): under nbclient, a capture in a cell after a tqdm progress bar left the cell waiting out
    its whole timeout (900 s in CI) after the kernel had gone idle."""
    import plotly.io as pio

    data = pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())  # what JupyterLab's plotly renderer reads
    out.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)


def fdr_spr_explorer(total_checks: int = 6, divisor: float = 5.0, alpha: float = 0.5):
    """Sliders for the family divisor D_f, SPR's bound alpha and the task's check count (defaults: a task of 6
    checks, D_f 5: the kit's training tasks have 3 to 7 checks, and `family_divisors` over tasks_mini gives D_f 4.9
    to 6.8 for their families)."""
    import ipywidgets as W

    d = W.FloatSlider(value=divisor, min=1, max=40, step=1, description="D_f")
    a = W.FloatSlider(value=alpha, min=0.0, max=0.95, step=0.05, description="SPR alpha")
    n = W.IntSlider(value=total_checks, min=1, max=40, description="checks")
    readout, out = W.HTML(), W.Output()

    def redraw(*_):
        c = reward_curves(n.value, d.value, a.value)
        above = sum(r >= c["fdr_success"] for r in c["fdr_failure"])
        readout.value = (f"<code>a failure at P={n.value - 1}: FDR {c['fdr_failure'][-2]:.3f}, SPR "
                         f"{c['spr_failure'][-2]:.3f} | success: FDR {c['fdr_success']:.3f}, SPR "
                         f"{c['spr_success']:.3f} | failures paid at least a success under FDR: {above}</code>")
        _show(out, reward_figure(c))

    for w in (d, a, n):
        w.observe(redraw, "value")
    redraw()
    return W.VBox([W.HBox([d, a, n]), readout, out])


def sequence_layout(action_lengths: list[int], observation_length: int, prompt_length: int = 8) -> list[int]:
    """An action mask: a prompt, then each action followed by an observation of the given length."""
    mask = [0] * prompt_length
    for i, n in enumerate(action_lengths):
        mask += [1] * n
        if i < len(action_lengths) - 1:
            mask += [0] * observation_length
    return mask


VALUE_FUNCTIONS = {
    "V = 0 (no critic)": lambda frac: 0.0,
    "V = 0.5 everywhere (a critic that expects a coin flip)": lambda frac: 0.5,
    "V rises 0.2 -> 0.9 (a critic that grows confident)": lambda frac: 0.2 + 0.7 * frac,
}
"""Value functions for the explorers, as a function of how far into the episode a token is (0 at the first token,
1 at the last): shapes a critic might have, to see what a baseline does to the advantages."""


def value_of(name: str, n: int) -> list[float]:
    f = VALUE_FUNCTIONS[name]
    return [f(i / max(1, n - 1)) for i in range(n)]


def turn_starts(mask: list[int]) -> list[int]:
    """The action-token indices (counting action tokens only) where a new turn begins, after the first."""
    starts, k, prev = [], 0, 0
    for m in mask:
        if m:
            if not prev and k:
                starts.append(k)
            k += 1
        prev = m
    return starts


def advantage_curves(action_lengths: list[int], observation_length: int, gamma: float, lam: float,
                     reward: float = 1.0, values: list[float] | None = None, gamma_turn: float | None = None,
                     lam_turn: float | None = None) -> dict:
    """Per-token advantages on the action tokens of one episode under three estimators: TB-GAE (discount
    `gamma_turn`, trace decay `lam_turn` once per turn boundary; default: `gamma`, `lam`), token-level GAE over
    action tokens (`gamma`, `lam` per action token), and naive GAE that steps through every token (observations
    included, per token), as frameworks that forget the mask do. `values`: one per token of the sequence (None: 0)."""
    import torch

    gamma_turn = gamma if gamma_turn is None else gamma_turn
    lam_turn = lam if lam_turn is None else lam_turn
    mask = torch.tensor([sequence_layout(action_lengths, observation_length)])
    v = torch.zeros(mask.shape) if values is None else torch.tensor([values], dtype=torch.float32)
    r = terminal_rewards(torch.tensor([reward]), mask)
    done = torch.tensor([True])
    tb, _ = tb_gae(r, v, mask, done, gamma_turn=gamma_turn, lam_turn=lam_turn)
    tok, _ = token_gae(r, v, mask, done, gamma=gamma, lam=lam)
    naive, _ = token_gae(r, v, torch.ones_like(mask), done, gamma=gamma, lam=lam)
    on = mask[0].bool()
    return {"mask": mask[0].tolist(), "tb_gae": tb[0][on].tolist(), "gae": tok[0][on].tolist(),
            "naive_gae": naive[0][on].tolist(), "values": v[0][on].tolist(), "turn_starts": turn_starts(mask[0].tolist())}


def _boundaries(fig, starts: list[int], **where) -> None:
    for k in starts:
        fig.add_vline(x=k - 0.5, line_dash="dot", line_color="#999", **where)


def tb_gae_explorer(action_lengths: list[int], gamma: float = 0.95, lam: float = 0.95, observation_length: int = 40,
                    gamma_turn: float = 0.95, lam_turn: float = 0.95, value: str = "V = 0 (no critic)"):
    """Sliders for GAE's per-token gamma and lambda, TB-GAE's per-turn gamma and lambda (kept apart: one number
    means different things in the two), the observation length, and a value function, over the actions of a real
    trajectory. Dotted lines mark turn boundaries."""
    import ipywidgets as W
    import plotly.graph_objects as go

    g = W.FloatSlider(value=gamma, min=0.5, max=1.0, step=0.01, description="γ per token")
    lam_s = W.FloatSlider(value=lam, min=0.5, max=1.0, step=0.01, description="λ per token")
    obs = W.IntSlider(value=observation_length, min=0, max=400, step=10, description="obs tokens")
    gt = W.FloatSlider(value=gamma_turn, min=0.5, max=1.0, step=0.01, description="γ per turn")
    lt = W.FloatSlider(value=lam_turn, min=0.5, max=1.0, step=0.01, description="λ per turn")
    vf = W.Dropdown(options=list(VALUE_FUNCTIONS), value=value, description="critic", layout=W.Layout(width="480px"))
    out = W.Output()

    def redraw(*_):
        n = len(sequence_layout(action_lengths, obs.value))
        c = advantage_curves(action_lengths, obs.value, g.value, lam_s.value, values=value_of(vf.value, n),
                             gamma_turn=gt.value, lam_turn=lt.value)
        x = list(range(len(c["tb_gae"])))
        names = {"tb_gae": "TB-GAE (γ, λ per turn)", "gae": "GAE (γ, λ per action token)",
                 "naive_gae": "naive GAE (per token, observations too)"}
        fig = go.Figure([go.Scatter(x=x, y=c[k], name=names[k], mode="lines") for k in ("tb_gae", "gae", "naive_gae")])
        fig.add_trace(go.Scatter(x=x, y=c["values"], name="V (the critic)", mode="lines",
                                 line=dict(color="#aaa", dash="dash")))
        _boundaries(fig, c["turn_starts"])
        fig.update_layout(xaxis_title="action token, in order (dotted: a turn boundary)",
                          yaxis_title="advantage (reward 1 at the end)", height=360, margin=dict(t=30))
        _show(out, fig)

    for w in (g, lam_s, obs, gt, lt, vf):
        w.observe(redraw, "value")
    redraw()
    return W.VBox([W.HBox([g, lam_s, obs]), out, W.HBox([gt, lt]), vf])


SCENARIOS = {
    "solves in turn 1, then deletes /app in turn 3": ([6, 4, 5], [1.0, 1.0, 0.0]),
    "solves in turn 1, then two idle commands": ([6, 4, 5], [1.0, 1.0, 1.0]),
}
"""Episodes of three actions (tokens per action) and the verdict of the workspace after each action: the first
is what the kit's RPR-1 did after six joint steps with the reward on the last token (`rm -r /app` after a
success, docs/experiments.md 2026-12-03); the second is the habit that taught it (idle commands after a success,
all credited with it)."""


def turn_reward_curves(action_lengths: list[int], verdicts: list[float], timing: str, gamma_turn: float = 1.0,
                       lam_turn: float = 0.95, value: float = 0.0, observation_length: int = 20) -> dict:
    """TB-GAE advantages per action token when the reward comes at the end ('final': the last verdict on the last
    action token) or per turn ('turn': each action earns the change in verdict it made, `turn_reward_deltas`,
    on its last token), with a constant critic `value`; and each turn's mean advantage."""
    import torch

    from ..rpr.targets import turn_reward_deltas

    mask = sequence_layout(action_lengths, observation_length)
    m = torch.tensor([mask])
    r = torch.zeros(m.shape)
    ends = [i for i in range(len(mask)) if mask[i] and (i + 1 == len(mask) or not mask[i + 1])]
    if timing == "final":
        r[0, ends[-1]] = verdicts[-1]
    elif timing == "turn":
        for end, d in zip(ends, turn_reward_deltas(verdicts)):
            r[0, end] = d
    else:
        raise ValueError(f"timing {timing!r}: 'final' or 'turn'")
    adv, _ = tb_gae(r, torch.full(m.shape, float(value)), m, torch.tensor([True]), gamma_turn, lam_turn)
    a = adv[0][m[0].bool()].tolist()
    per_turn, k = [], 0
    for n in action_lengths:
        per_turn.append(sum(a[k:k + n]) / n)
        k += n
    return {"advantages": a, "per_turn": per_turn, "turn_starts": turn_starts(mask),
            "rewards": [float(r[0, e]) for e in ends]}


def turn_reward_explorer(scenario: str = "solves in turn 1, then deletes /app in turn 3", timing: str = "final",
                         lam_turn: float = 0.95, value: float = 0.5):
    """Which turn gets the credit: the reward on the last token, or per turn; TB-GAE's per-turn lambda; a constant
    critic."""
    import ipywidgets as W
    import plotly.graph_objects as go

    sc = W.Dropdown(options=list(SCENARIOS), value=scenario, description="episode", layout=W.Layout(width="480px"))
    tm = W.ToggleButtons(options=["final", "turn"], value=timing, description="reward")
    lt = W.FloatSlider(value=lam_turn, min=0.0, max=1.0, step=0.05, description="λ per turn")
    vs = W.FloatSlider(value=value, min=0.0, max=1.0, step=0.05, description="critic V")
    readout, out = W.HTML(), W.Output()

    def redraw(*_):
        lengths, verdicts = SCENARIOS[sc.value]
        c = turn_reward_curves(lengths, verdicts, tm.value, lam_turn=lt.value, value=vs.value)
        colours = [f"C{t}" for t, n in enumerate(lengths) for _ in range(n)]
        palette = {"C0": "#2a7", "C1": "#999", "C2": "#d33"}
        fig = go.Figure([go.Bar(x=list(range(len(c["advantages"]))), y=c["advantages"], name="advantage",
                                marker_color=[palette[k] for k in colours])])
        _boundaries(fig, c["turn_starts"])
        fig.update_layout(xaxis_title="action token (turn 1 green, turn 2 grey, turn 3 red; dotted: a boundary)",
                          yaxis_title="TB-GAE advantage", height=330, margin=dict(t=30), showlegend=False)
        readout.value = ("<code>rewards per turn " + ", ".join(f"{x:+.2f}" for x in c["rewards"]) +
                         " | mean advantage per turn " + ", ".join(f"{x:+.3f}" for x in c["per_turn"]) + "</code>")
        _show(out, fig)

    for w in (sc, tm, lt, vs):
        w.observe(redraw, "value")
    redraw()
    return W.VBox([W.HBox([lt, vs]), out, readout, tm, sc])
