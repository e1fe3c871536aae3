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
