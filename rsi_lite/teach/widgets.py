"""Interactive widgets for the notebooks (ipywidgets + plotly): FDR vs SPR, GAE vs TB-GAE.

The curves are computed by plain functions (`reward_curves`, `advantage_curves`) that the
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


def fdr_spr_explorer(total_checks: int = 20, divisor: float = 12.0, alpha: float = 0.5):
    """Sliders for the family divisor D_f, SPR's bound alpha and the task's check count."""
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


def advantage_curves(action_lengths: list[int], observation_length: int, gamma: float, lam: float,
                     reward: float = 1.0, values: list[float] | None = None) -> dict:
    """Per-token advantages on the action tokens of one episode under three estimators:
    TB-GAE, token-level GAE over action tokens, and naive GAE that steps through every token
    (observations included), as frameworks that forget the mask do."""
    import torch

    mask = torch.tensor([sequence_layout(action_lengths, observation_length)])
    v = torch.zeros(mask.shape) if values is None else torch.tensor([values], dtype=torch.float32)
    r = terminal_rewards(torch.tensor([reward]), mask)
    done = torch.tensor([True])
    tb, _ = tb_gae(r, v, mask, done, gamma_turn=gamma, lam_turn=lam)
    tok, _ = token_gae(r, v, mask, done, gamma=gamma, lam=lam)
    naive, _ = token_gae(r, v, torch.ones_like(mask), done, gamma=gamma, lam=lam)
    on = mask[0].bool()
    return {"mask": mask[0].tolist(), "tb_gae": tb[0][on].tolist(), "gae": tok[0][on].tolist(),
            "naive_gae": naive[0][on].tolist()}


def tb_gae_explorer(action_lengths: list[int], gamma: float = 0.95, lam: float = 0.95, observation_length: int = 40):
    """Sliders for gamma_turn, lambda_turn and the observation length over the actions of a real trajectory."""
    import ipywidgets as W
    import plotly.graph_objects as go

    g = W.FloatSlider(value=gamma, min=0.5, max=1.0, step=0.01, description="gamma")
    lam_s = W.FloatSlider(value=lam, min=0.5, max=1.0, step=0.01, description="lambda")
    obs = W.IntSlider(value=observation_length, min=0, max=400, step=10, description="obs tokens")
    out = W.Output()

    def redraw(*_):
        c = advantage_curves(action_lengths, obs.value, g.value, lam_s.value)
        x = list(range(len(c["tb_gae"])))
        fig = go.Figure([go.Scatter(x=x, y=c[k], name=k, mode="lines") for k in ("tb_gae", "gae", "naive_gae")])
        fig.update_layout(xaxis_title="action token (in order)", yaxis_title="advantage (V = 0, reward 1 at the end)",
                          height=340, margin=dict(t=30))
        _show(out, fig)

    for w in (g, lam_s, obs):
        w.observe(redraw, "value")
    redraw()
    return W.VBox([W.HBox([g, lam_s, obs]), out])
