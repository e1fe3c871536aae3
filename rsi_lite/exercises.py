"""Checkers for the notebooks' exercises (Spinning Up style): your function against the reference.

Each checker returns (ok, message) and never raises, so a notebook with the stub still runs.
"""

from __future__ import annotations

import math
import random

from .advantages import reference_tb_gae


def check_tb_gae(fn, trials: int = 20, seed: int = 0) -> tuple[bool, str]:
    """`fn(rewards, values, mask, done, gamma_turn, lam_turn) -> advantages` for one sequence (plain lists)."""
    rng = random.Random(seed)
    for i in range(trials):
        n = rng.randint(3, 30)
        mask = [int(rng.random() > 0.4) for _ in range(n)]
        values = [rng.uniform(-1, 1) for _ in range(n)]
        rewards = [0.0] * n
        last = max((t for t, m in enumerate(mask) if m), default=None)
        if last is not None:
            rewards[last] = rng.choice([0.0, 0.5, 1.0])
        done, g, lam = rng.random() < 0.7, rng.uniform(0.5, 1), rng.uniform(0.5, 1)
        want = reference_tb_gae(rewards, values, mask, done, g, lam)
        try:
            got = list(fn(rewards, values, mask, done, g, lam))
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if len(got) != n or any(not math.isclose(a, b, abs_tol=1e-6) for a, b in zip(got, want)):
            return False, (f"case {i}: mask={mask} done={done} gamma={g:.3f} lambda={lam:.3f}\n"
                           f"  expected {[round(x, 4) for x in want]}\n  got      {[round(float(x), 4) for x in got]}")
    return True, f"correct on {trials} random sequences"
