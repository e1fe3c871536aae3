"""How the actor's actions read, turn by turn: a drift no success rate shows until it costs successes.

PPO credits every action token of an episode with the episode's advantage, so whatever an actor writes after the
task is already solved (the turn that should say TASK COMPLETE) is pushed up in a success whether it is the done
marker or noise sampled at temperature 1. Per action turn this module counts, over a set of episodes:

    actions     episodes that reached the turn
    unparsed    replies the harness could not parse (bash: no command block and no done marker; Terminus 2
                JSON: no valid object): the turn ran nothing. A JSON reply that parses but lists no command that
                runs is not counted here.
    done        replies that say the task is done (TASK COMPLETE, or `task_complete` in JSON); a harness that asks
                for a confirmation first may not end the episode on it
    tokens      mean generated tokens of the reply
    nll         mean negative log-probability of the sampled tokens, as the rollout recorded them: it rises
                when the actor's replies spread out (an entropy proxy that needs no second forward)

`step_turns(stage)` gives the figures per step of a refinement stage (`rpr-N/step-k`), `turns_markdown` the
report's table; the same function reads an evaluation's trajectories (`heldout-rpr-N/eval-<stage>`).
"""

from __future__ import annotations

from pathlib import Path

from ..harness.parsers import parse_action


def reply_kinds(t) -> list[str]:
    """Each action reply of a trajectory, in turn order: 'done' (says the task is done), 'unparsed' (the harness
    could not parse it: it ran nothing) or 'command'. The one reading of replies that the turn tables, the credit
    bench and the PPO update's `unparsed_penalty` share."""
    out = []
    for m in t.messages:
        if m.get("kind") == "action":
            p = parse_action(m["content"], t.action_format)
            out.append("done" if p.task_complete else "unparsed" if p.error else "command")
    return out


def turn_health(trajs: list) -> list[dict]:
    """Per action turn (numbered from 1 in each row's "turn"), over the trajectories that reached it: actions,
    unparsed and done shares, mean tokens and mean sampled-token NLL (see the module docstring). Trajectories are
    `rollout.trajectory.Trajectory`."""
    acc: list[dict] = []
    for t in trajs:
        for i, kind in enumerate(reply_kinds(t)):
            while len(acc) <= i:
                acc.append({"actions": 0, "unparsed": 0, "done": 0, "tokens": 0, "nll": 0.0})
            a = acc[i]
            a["actions"] += 1
            a["unparsed"] += kind == "unparsed"
            a["done"] += kind == "done"
            if i < len(t.turn_spans):
                s, e = t.turn_spans[i]
                own = [lp for lp, m in zip(t.logprobs[s:e], t.action_mask[s:e]) if m]
                a["tokens"] += len(own)
                a["nll"] -= sum(own)
    return [{"turn": i + 1, "actions": a["actions"], "unparsed": a["unparsed"] / a["actions"],
             "done": a["done"] / a["actions"], "tokens": a["tokens"] / a["actions"],
             "nll": a["nll"] / a["tokens"] if a["tokens"] else float("nan")} for i, a in enumerate(acc)]


def step_turns(stage: Path) -> dict[str, list[dict]]:
    """{step directory name: turn_health of its batch} for a refinement stage, oldest step first."""
    from ..rollout.trajectory import read_trajectories
    from ..rundir import StageDir

    return {f.parent.name: turn_health(read_trajectories(f)) for f in StageDir(stage).trajectory_files()}


def turns_markdown(title: str, rows: dict[str, list[dict]]) -> list[str]:
    """One line per row label (a step, a checkpoint): each turn's unparsed and done shares, tokens and NLL."""
    if not rows:
        return []
    n = max(len(r) for r in rows.values())
    head = " | ".join(f"turn {i + 1}: unparsed / done / tokens / NLL" for i in range(n))
    out = [f"## {title}", "", "Per action turn: the share of replies the harness could not parse, the share that "
           "said the task was done, the mean tokens of a reply, and the mean negative log-probability of its "
           "sampled tokens (rising when the replies spread out).", "", f"| | {head} |", "|---|" + "---|" * n]
    for label, turns in rows.items():
        cells = [f"{100 * t['unparsed']:.0f}% / {100 * t['done']:.0f}% / {t['tokens']:.0f} / {t['nll']:.2f}"
                 for t in turns] + ["-"] * (n - len(turns))
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return out + [""]
