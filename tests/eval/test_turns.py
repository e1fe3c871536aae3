"""The report's turn-by-turn reading of the actor's replies (`eval.turns`): which replies parse, which say the
task is done, and how spread out the sampled tokens are. `pytest tests/eval/test_turns.py`."""

from __future__ import annotations

import math

import pytest

from rsi_lite.eval.turns import step_turns, turn_health, turns_markdown
from rsi_lite.rollout.trajectory import Trajectory, write_trajectories


def episode(replies: list[str], logprobs: list[list[float]]) -> Trajectory:
    """An episode whose i-th reply generated the tokens with the given log-probabilities (a prompt token before
    each reply, outside the action mask)."""
    messages, ids, mask, lps, spans = [{"role": "user", "kind": "instruction", "content": "do it"}], [], [], [], []
    for text, lp in zip(replies, logprobs):
        messages += [{"role": "assistant", "kind": "action", "content": text},
                     {"role": "user", "kind": "observation", "content": "(no output)"}]
        ids.append(0)
        mask.append(0)
        lps.append(0.0)
        spans.append([len(ids), len(ids) + len(lp)])
        ids += [1] * len(lp)
        mask += [1] * len(lp)
        lps += lp
    return Trajectory(task="t", task_path="", suite="pool", family="f", difficulty="easy", harness="plain",
                      action_format="bash", policy="x", seed=0, system="", messages=messages[:-1], token_ids=ids,
                      action_mask=mask, logprobs=lps, turn_spans=spans, finish_reason="max_turns",
                      turns=len(replies), verifier={"strict": 1}, rewards={"s": 1.0}, tokens={}, timings={})


def test_each_turn_counts_unparsed_and_done_replies_and_their_nll():
    """Two episodes reach turn 3: one says TASK COMPLETE, one writes prose with no command (the drift the cpu
    run's RPR-1 showed); a third ends after one turn. Shares are over the episodes that reached the turn, the NLL
    over the turn's sampled tokens only."""
    cmd = "```bash\nls\n```"
    eps = [episode([cmd, cmd, "TASK COMPLETE"], [[-0.1, -0.1], [-0.2], [-0.3, -0.3]]),
           episode([cmd, cmd, "TASK COMPLIMMER Plus and CLEAR"], [[-0.1, -0.1], [-0.2], [-2.0, -4.0]]),
           episode(["TASK COMPLETE"], [[-0.5]])]
    turns = turn_health(eps)
    assert [t["actions"] for t in turns] == [3, 2, 2]
    assert turns[0]["done"] == pytest.approx(1 / 3) and turns[0]["unparsed"] == 0
    assert turns[2]["done"] == 0.5 and turns[2]["unparsed"] == 0.5
    assert turns[0]["tokens"] == pytest.approx(5 / 3) and turns[2]["tokens"] == 2
    assert turns[0]["nll"] == pytest.approx(0.9 / 5) and turns[2]["nll"] == pytest.approx(6.6 / 4)


def test_a_stage_reads_per_step_and_the_report_table_keeps_its_columns(tmp_path):
    cmd = "```bash\nls\n```"
    for k, last in enumerate(["TASK COMPLETE", "no command here"]):
        d = tmp_path / f"step-{k:03d}"
        d.mkdir()
        write_trajectories([episode([cmd, last], [[-0.1], [-1.0]])], d / "trajectories.jsonl")
    rows = step_turns(tmp_path)
    assert list(rows) == ["step-000", "step-001"]
    assert rows["step-000"][1]["done"] == 1 and rows["step-001"][1]["unparsed"] == 1
    md = turns_markdown("Turns", {**rows, "short": [rows["step-000"][0]]})
    assert md[0] == "## Turns" and "turn 2: unparsed / done / tokens / NLL" in md[4]
    assert md[-3].startswith("| step-001 | 0% / 0% / 1 / 0.10 | 100% / 0% / 1 / 1.00 |")
    assert md[-2] == "| short | 0% / 0% / 1 / 0.10 | - |"
    assert turns_markdown("Turns", {}) == [] and math.isnan(turn_health([episode(["x"], [[]])])[0]["nll"])
