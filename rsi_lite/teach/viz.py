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
