"""Which tasks a PPO batch is drawn from: the learnable frontier (the paper's uniform draw is
`rpr_batches.step_batches`).

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

Pure functions on (task name, verdict) records; the RPR stage and `scale_up.generate` call them
with the same history read from the stage's files, so both draw the same batch.
"""

from __future__ import annotations

import random
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


def learnable(table: dict[str, list[int]], names: Iterable[str]) -> list[str]:
    """The names whose recent success rate is strictly between 0 and 1, in the order given."""
    return [n for n in names if 0 < (success_rate(table.get(n, [])) or 0) < 1]


def draw_batch(names: list[str], history: list[tuple[str, int]], n: int, rng: random.Random, *,
               window: int = 4, explore: float = 0.25) -> tuple[list[str], dict]:
    """n task names for one PPO batch by the frontier rule (module docstring); and what the draw saw.

    `history` is every (task, strict) verdict so far in time order; `names` the candidate pool.
    Returns (batch, info) with info = {"learnable": count, "explore": slots used for exploring,
    "rule": "frontier" or "uniform" (the fallback when nothing is learnable)}."""
    table = outcome_table(history, window)
    front = learnable(table, names)
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

