"""Paired comparisons of two checkpoints on the same tasks: each task's success rate before and after, and the change
in their mean with a percentile interval from a bootstrap that resamples tasks, a task's two rates together.

Why over tasks. A measurement runs `samples` episodes of each task; episodes of one task share its files, its
instruction and whatever makes it easy or hard, so they are not independent draws, and an interval that treated
them as such would be too narrow. Resampling whole tasks (with their before and after rates paired) keeps what one
task contributes together; pairing removes the variation between tasks that both checkpoints share.
Used by `python -m rsi_lite.bench.learns` and the report's held-out claims (`report.claims.heldout_claims`).
"""

from __future__ import annotations

import math
import random
from pathlib import Path


def task_rates(trajs, kinds: dict[str, str]) -> dict[str, tuple[str, float]]:
    """Each held-out task's kind and success rate over its episodes."""
    got: dict[str, list[int]] = {}
    for t in trajs:
        got.setdefault(t.task, []).append(int(bool(t.verifier.get("strict"))))
    return {name: (kinds.get(name, "?"), sum(v) / len(v)) for name, v in got.items()}


def paired_bootstrap(before: list[float], after: list[float], resamples: int = 4000, seed: int = 0,
                     level: float = 0.95) -> dict:
    """The change in mean success, after - before, over paired tasks, and its percentile interval from resampling
    the tasks with replacement (each draw keeps a task's before and after together). Returns {"delta", "low",
    "high", "tasks", "before", "after"} (rates in 0..1).

    >>> r = paired_bootstrap([0.0, 0.0, 1.0], [1.0, 1.0, 1.0], resamples=200)
    >>> round(r["delta"], 3), r["tasks"]
    (0.667, 3)
    """
    if len(before) != len(after):
        raise ValueError(f"paired_bootstrap: {len(before)} before and {len(after)} after")
    n = len(before)
    if n == 0:
        return {"delta": float("nan"), "low": float("nan"), "high": float("nan"), "tasks": 0,
                "before": float("nan"), "after": float("nan")}
    diffs = [a - b for a, b in zip(after, before)]
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    return {"delta": sum(diffs) / n, "low": means[int(math.floor(tail * (resamples - 1)))],
            "high": means[int(math.ceil((1 - tail) * (resamples - 1)))], "tasks": n,
            "before": sum(before) / n, "after": sum(after) / n}


def compare(before: dict[str, tuple[str, float]], after: dict[str, tuple[str, float]], *, room: float | None,
            resamples: int, seed: int = 0) -> dict:
    """Held-out success before and after on the tasks both measured: overall, per kind, and (with `room`) on the
    kinds whose incoming success is at most `room`."""
    names = sorted(set(before) & set(after))
    kinds = sorted({before[n][0] for n in names})

    def over(subset):
        return paired_bootstrap([before[n][1] for n in subset], [after[n][1] for n in subset], resamples, seed)

    by_kind = {k: over([n for n in names if before[n][0] == k]) for k in kinds}
    out = {"all": over(names), "by_kind": by_kind}
    if room is not None:
        roomy = [k for k in kinds if by_kind[k]["before"] <= room]
        out["room"] = {**over([n for n in names if before[n][0] in roomy]), "kinds": roomy}
    return out


def compare_dirs(before: Path, after: Path, kinds_file: Path | None = None, resamples: int = 4000) -> str:
    """Two finished evaluations of the same tasks (`rsi-lite eval --out`, a run's `heldout-rpr-N/eval-<stage>`, or
    a run's `eval-<stage>`) and the kinds file that names each task's kind (`heldout-rpr-N/kinds.json`; without
    one each task's group is its suite, so two stages' evaluations compare suite by suite): the change with its
    interval, overall and per group, and each turn's replies (`eval.turns`), as text."""
    from ..records import read_json
    from ..rollout.trajectory import read_trajectories
    from .turns import turn_health

    trajs = [read_trajectories(Path(d) / "trajectories.jsonl") for d in (before, after)]
    if kinds_file is None:
        kinds = {t.task: t.suite for t in trajs[0] + trajs[1]}
    else:
        kinds = read_json(kinds_file).get("tasks") if Path(kinds_file).is_file() else None
    if not isinstance(kinds, dict):
        raise ValueError(f"{kinds_file}: no 'tasks' object (each held-out task's kind), as heldout-rpr-N/kinds.json has")
    rates = [task_rates(t, kinds) for t in trajs]
    unpaired = len(set(rates[0]) ^ set(rates[1]))
    if not set(rates[0]) & set(rates[1]):
        raise ValueError(f"{before} and {after}: no task measured in both")
    c = compare(*rates, room=None, resamples=resamples)

    def line(name: str, r: dict) -> str:
        return (f"{name[:44]:44} {100 * r['before']:6.1f} -> {100 * r['after']:5.1f}  {100 * r['delta']:+6.1f} "
                f"[{100 * r['low']:+6.1f}, {100 * r['high']:+6.1f}]  {r['tasks']} tasks")

    out = [f"{before} -> {after}: paired bootstrap over tasks, 95% interval"
           + (f" ({unpaired} tasks measured in one of the two only, left out)" if unpaired else ""),
           line("all", c["all"])] + [line(k, r) for k, r in c["by_kind"].items()]
    for d, t in zip((before, after), trajs):
        out.append(f"{d}: " + "; ".join(f"turn {h['turn']}: unparsed {100 * h['unparsed']:.0f}%, done "
                                        f"{100 * h['done']:.0f}%, {h['tokens']:.0f} tokens, NLL {h['nll']:.2f}"
                                        for h in turn_health(t)))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> str:
    import argparse

    p = argparse.ArgumentParser(description="Compare two evaluations of the same tasks, task-paired.")
    p.add_argument("before", type=Path, help="the incoming checkpoint's evaluation directory")
    p.add_argument("after", type=Path, help="the trained checkpoint's evaluation directory")
    p.add_argument("--kinds", type=Path, help="kinds.json of held-out tasks (heldout-rpr-N/); without it, by suite")
    args = p.parse_args(argv)
    for d in (args.before, args.after):
        if not (d / "trajectories.jsonl").is_file():
            raise SystemExit(f"{d / 'trajectories.jsonl'}: missing; give a finished evaluation directory")
    try:
        out = compare_dirs(args.before, args.after, args.kinds)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    print(out)
    return out


if __name__ == "__main__":
    main()
