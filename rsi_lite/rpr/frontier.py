"""Which tasks a PPO batch is drawn from: the learnable frontier (the paper's uniform draw is
`rpr.batches.step_batches`).

Background. PPO learns from the contrast between episodes that went better and worse than the
critic expected. A task the actor never solves gives every episode the same verdict (0), and so
does one it always solves (1): its advantages are the critic's errors, not a signal. The paper
draws 256 tasks per batch uniformly from a 3,000-task pool, one rollout each; at that scale a
batch holds plenty of successes. A 135M model solves almost no pool task, so a uniform batch of
8 holds none and every PPO step is noise (the paper's own Table 4 control, direct PPO from Base,
in every run). The frontier rule keeps the batch where there is something to learn:

    outcomes(task)  the task's last `window` strict verdicts under the current actor's training
                    rollouts (probes of the whole pool, and the PPO steps themselves, oldest first)
    p(task)         mean of outcomes(task);  learnable  <=>  0 < p < 1
    batch of n      round(explore * n) slots: tasks that are not learnable (never seen first, then
                    the least recently seen), so that a task the actor has started to solve, or
                    forgotten, gets back in; the other slots: learnable tasks, drawn uniformly
                    without replacement, again round after round if there are fewer than slots
                    (several rollouts of one task, each its own episode)
    no learnable    the uniform draw (and `learnable` = 0 in the step's metrics: the finding)

Since every PPO step adds its own verdicts, the frontier follows the actor: a task it now always
solves leaves, one it newly solves sometimes enters (through an explore slot or a probe).

The frontier by kind (`draw_by_kind`, batch rule 'kinds'). Measured on the bundled model: the frontier
of single tasks is a handful of tasks, so its batches repeat a few tasks' exact token sequences and the
pool's success fell (docs/experiments.md). But success belongs less to an instance than to its kind (the
generator's template: "Count the data rows of X", "Write the text X into"): in one RPR run the RSR-1 actor
solved nearly every row count and no look-up, each across many instances (docs/experiments.md, "Figures behind the code's choices"). The kind rule estimates
success per kind and draws distinct, least-used tasks of the learnable kinds:

    kind(task)      family/difficulty + the instruction's first words, paths, quotes and numbers masked
    p(kind)         mean of the kind's last `window` verdicts (probes and steps)
    learnable       0 < p(kind) < 1
    batch of n      round(explore * n) slots: one task each from kinds that are not learnable (never seen
                    first, then the least recently seen); the others: a kind drawn with weight p(1 - p) (the
                    variance of its verdict: the size of the signal an episode of it carries), then its
                    least-drawn task not yet in the batch; no task twice while others are left

Pure functions on (task name, verdict) records; the RPR stage calls them with the history read from
its own files, so a resumed stage draws the same batch.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable


def outcome_table(history: Iterable[tuple[str, int]], window: int) -> dict[str, list[int]]:
    """Each task's last `window` verdicts (oldest first) from (task, strict) records in time order.

    >>> outcome_table([("a", 0), ("b", 1), ("a", 1), ("a", 1)], window=2)
    {'a': [1, 1], 'b': [1]}
    """
    table: dict[str, list[int]] = {}
    for name, strict in history:
        seen = table.setdefault(name, [])
        seen.append(int(bool(strict)))
        del seen[:-window]
    return table


def success_rate(outcomes: list[int]) -> float | None:
    return sum(outcomes) / len(outcomes) if outcomes else None


def frontier_names(table: dict[str, list[int]], names: Iterable[str]) -> list[str]:
    """The names on the frontier: those whose recent success rate in `table` (`outcome_table`) is strictly
    between 0 and 1, in the order given."""
    return [n for n in names if 0 < (success_rate(table.get(n, [])) or 0) < 1]


def draw_batch(names: list[str], history: list[tuple[str, int]], n: int, rng: random.Random, *,
               window: int = 4, explore: float = 0.25) -> tuple[list[str], dict]:
    """n task names for one PPO batch by the frontier rule (module docstring); and what the draw saw.

    `history` is every (task, strict) verdict so far in time order; `names` the candidate pool.
    Returns (batch, info) with info = {"learnable": count, "explore": slots used for exploring,
    "rule": "frontier" or "uniform" (the fallback when nothing is learnable)}."""
    table = outcome_table(history, window)
    front = frontier_names(table, names)
    if not front:
        return rng.sample(names, min(n, len(names))), {"learnable": 0, "explore": 0, "rule": "uniform"}
    last_seen = {name: i for i, (name, _) in enumerate(history)}
    in_front = set(front)
    others = [x for x in names if x not in in_front]
    rng.shuffle(others)  # ties (never seen) broken at random, then the least recently seen first
    others.sort(key=lambda x: last_seen.get(x, -1))
    n_explore = min(len(others), round(explore * n))
    batch = others[:n_explore]
    while len(batch) < n:
        batch += rng.sample(front, min(len(front), n - len(batch)))
    return batch, {"learnable": len(front), "explore": n_explore, "rule": "frontier"}



def draw_by_kind(names: list[str], kinds: dict[str, str], history: list[tuple[str, int]], n: int,
                 rng: random.Random, *, window: int = 16, explore: float = 0.25) -> tuple[list[str], dict]:
    """n distinct task names by the kind rule (module docstring), and what the draw saw.

    `kinds` maps every task name (the candidates and any other with verdicts in `history`, such as held-out
    probe tasks) to its kind. info = {"rule", "learnable" (kinds), "learnable_tasks", "explore", "kinds": each
    kind's [successes, verdicts] in its window}."""
    table = outcome_table(((kinds[t], s) for t, s in history if t in kinds), window)
    members: dict[str, list[str]] = {}
    for name in names:
        members.setdefault(kinds[name], []).append(name)
    p = {k: success_rate(table.get(k, [])) for k in members}
    front = [k for k in members if 0 < (p[k] or 0) < 1]
    seen = {k: [sum(v), len(v)] for k, v in sorted(table.items()) if k in members}
    if not front:
        batch = rng.sample(names, min(n, len(names)))
        return batch, {"rule": "uniform", "learnable": 0, "learnable_tasks": 0, "explore": 0, "kinds": seen}
    used = Counter(t for t, _ in history)
    tie = {name: rng.random() for name in names}
    batch: list[str] = []

    def take(kind: str) -> bool:
        left = [t for t in members[kind] if t not in batch]
        if left:
            batch.append(min(left, key=lambda t: (used[t], tie[t])))
        return bool(left)

    last_seen = {kinds[t]: i for i, (t, _) in enumerate(history) if t in kinds}
    others = sorted((k for k in members if k not in front), key=lambda k: (last_seen.get(k, -1), rng.random()))
    n_explore = min(len(others), round(explore * n))
    for kind in others[:n_explore]:
        take(kind)
    live = list(front)
    while len(batch) < n and live:
        kind = rng.choices(live, weights=[p[k] * (1 - p[k]) for k in live])[0]
        if not take(kind):
            live.remove(kind)
    return batch, {"rule": "kinds", "learnable": len(front), "learnable_tasks": sum(len(members[k]) for k in front),
                   "explore": n_explore, "kinds": seen}
