"""Integrality audit of reported scores: which (task count, run count) give this percentage?

A Mean@k success rate over n tasks is (solved runs) / (n * k). A reported percentage is
therefore only possible if some whole count c satisfies round(100 * c / (n * k), 2) equal
to it. The audit lists every fitting count, so a reader can tell, e.g., that 19.84 fits
only 25/126 (two runs of 63 tasks) among the candidate suites.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fit:
    tasks: int
    runs: int
    count: int

    @property
    def denominator(self) -> int:
        return self.tasks * self.runs

    def __str__(self) -> str:
        return f"{self.count}/{self.denominator} ({self.tasks} tasks x {self.runs} runs) = {100 * self.count / self.denominator:.4f}%"


def fits(score: float, tasks: list[int], runs: list[int], decimals: int = 2) -> list[Fit]:
    """Every (tasks, runs, count) whose percentage rounds to `score` at `decimals` places."""
    out = []
    tol = 0.5 * 10 ** -decimals + 1e-9
    for n in tasks:
        for k in runs:
            d = n * k
            c = round(score * d / 100)
            for cand in (c - 1, c, c + 1):
                if 0 <= cand <= d and abs(100 * cand / d - score) <= tol:
                    out.append(Fit(n, k, cand))
    return out


def explain(score: float, tasks: list[int], runs: list[int]) -> str:
    found = fits(score, tasks, runs)
    denoms = ", ".join(f"{n * k} ({n}x{k})" for n in tasks for k in runs)
    if not found:
        return f"{score:.2f} fits no whole count over {denoms}"
    if len(found) == 1:
        return f"{score:.2f} fits only {found[0]}"
    return f"{score:.2f} fits " + "; ".join(str(f) for f in found)
