"""Rewards as pure functions of a verifier report: S, FDR and SPR, and the reward audit.

Background. The verifier tells us two things about an episode: whether the whole test
suite passed (strict success S in {0, 1}) and how many semantic checks passed (P). A
shaped reward pays for P so that failures still carry signal, but a shaped reward can
also pay a failure more than a success, and then PPO learns to fail productively.

Key equations (D_f: the 90th percentile of check counts in the task's family, default 82):

    S   = 1 if every check passed, else 0
    FDR = P / D_f                                   (linear, no completion bonus)
    SPR = S + (1 - S) * alpha * min(P / D_f, 1)     (0 <= alpha < 1)

Under FDR a failure with P > D_f scores above 1.0, which is more than a success with few
checks (the paper: 158 failures scored >= 1.0, 50.09% of all FDR reward went to failures).
Under SPR a success scores >= 1 and every failure scores <= alpha < 1, so a success always
outranks any failure, whatever the check counts. Both fall back to S when the report is
invalid (no trustworthy P).

Pitfalls. D_f is per family: a family with 5 checks per task and D_f = 82 pays almost
nothing for progress; `family_divisors` computes D_f from the tasks themselves.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

DEFAULT_DIVISOR = 82.0
DEFAULT_ALPHA = 0.5


@dataclass(frozen=True)
class Outcome:
    """The part of a verifier report a reward needs."""

    strict: int
    passed: int
    total: int
    valid: bool

    @classmethod
    def of(cls, report) -> "Outcome":
        """From a VerifierReport or a dict with the same fields."""
        return cls(int(_field(report, "strict", 0)), int(_field(report, "passed", 0)),
                   int(_field(report, "total", 0)), bool(_field(report, "valid", False)))


def strict_reward(o: Outcome) -> float:
    """S: 1.0 for full verifier passage, else 0.0."""
    return float(o.strict)


def fdr_reward(o: Outcome, divisor: float = DEFAULT_DIVISOR) -> float:
    """Family Dense Reward P / D_f; S when the report is invalid.

    >>> fdr_reward(Outcome(strict=0, passed=41, total=90, valid=True), 82)
    0.5
    >>> fdr_reward(Outcome(strict=0, passed=90, total=95, valid=True), 82) > 1.0   # a failure above 1
    True
    """
    if divisor <= 0:
        raise ValueError(f"FDR divisor must be positive, got {divisor}")
    return o.passed / divisor if o.valid else float(o.strict)


def spr_reward(o: Outcome, divisor: float = DEFAULT_DIVISOR, alpha: float = DEFAULT_ALPHA) -> float:
    """Success-Prioritized Reward S + (1 - S) * alpha * min(P / D_f, 1); S when the report is invalid.

    A success scores exactly 1; a failure scores in [0, alpha], alpha < 1, so success always wins.

    >>> spr_reward(Outcome(1, 5, 5, True), 82)
    1.0
    >>> spr_reward(Outcome(0, 90, 95, True), 82, alpha=0.5)   # capped progress, bounded below 1
    0.5
    """
    if not 0 <= alpha < 1:
        raise ValueError(f"SPR alpha must be in [0, 1) so that failures stay below successes, got {alpha}")
    if divisor <= 0:
        raise ValueError(f"SPR divisor must be positive, got {divisor}")
    if not o.valid:
        return float(o.strict)
    return o.strict + (1 - o.strict) * alpha * min(o.passed / divisor, 1.0)


REWARDS = {"s": strict_reward, "fdr": fdr_reward, "spr": spr_reward}
"""Every reward by the name `Trajectory.rewards`, `RPRConfig.reward` and the command line know it by: a reward
added here is computed for every episode and can be trained on."""


def compute_reward(kind: str, report, *, divisor: float = DEFAULT_DIVISOR, alpha: float = DEFAULT_ALPHA) -> float:
    """The reward `kind` (a key of `REWARDS`, in any case) of a verifier report or a dict with its fields.

    >>> compute_reward("FDR", {"strict": 0, "passed": 41, "total": 50, "valid": True}, divisor=82)
    0.5
    """
    try:
        reward = REWARDS[kind.lower()]
    except KeyError:
        raise ValueError(f"unknown reward {kind!r}; choose one of {', '.join(REWARDS)}") from None
    # S takes no setting, FDR D_f, SPR D_f and alpha: each gets those it takes
    takes = inspect.signature(reward).parameters
    return reward(Outcome.of(report), **{k: v for k, v in (("divisor", divisor), ("alpha", alpha)) if k in takes})


def percentile90(counts: Iterable[int]) -> float:
    """The 90th percentile (linear interpolation, as numpy's default) of a family's check counts."""
    xs = sorted(counts)
    if not xs:
        raise ValueError("no check counts")
    pos = 0.9 * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def family_divisors(check_counts: Mapping[str, Iterable[int]]) -> dict[str, float]:
    """D_f per family from the check counts of its tasks."""
    return {fam: percentile90(c) for fam, c in check_counts.items()}


@dataclass
class AuditRow:
    reward: str
    episodes: int
    failures: int
    total_reward: float
    failure_reward: float
    failure_share: float
    """Failures' share of all reward paid."""
    failures_at_least_one: int
    """Failures scoring >= 1.0 (paid at least what a success is paid)."""
    failures_all_executed_passed: int
    """Failures whose every executed check passed (the gate failed anyway: e.g. a test never ran)."""


def audit(reports: Iterable, divisors: Mapping[str, float] | None = None, *, default_divisor: float = DEFAULT_DIVISOR,
          alpha: float = DEFAULT_ALPHA, families: Iterable[str] | None = None) -> list[AuditRow]:
    """The paper's offline audit: how much of each reward goes to failures, FDR and SPR side by side."""
    reports = list(reports)
    fams = list(families) if families is not None else ["" for _ in reports]
    divisors = divisors or {}
    rows = []
    for kind in ("fdr", "spr"):
        total = fail_total = 0.0
        n_fail = at_least_one = all_passed = 0
        for rep, fam in zip(reports, fams):
            o = Outcome.of(rep)
            r = compute_reward(kind, o, divisor=divisors.get(fam, default_divisor), alpha=alpha)
            total += r
            if not o.strict:
                n_fail += 1
                fail_total += r
                at_least_one += r >= 1.0
                all_passed += bool(o.valid and o.passed > 0 and o.passed == o.total - int(_field(rep, "skipped", 0) or 0))
        rows.append(AuditRow(kind.upper(), len(reports), n_fail, total, fail_total,
                             fail_total / total if total else 0.0, at_least_one, all_passed))
    return rows


def _field(report, key: str, default):
    """A field of a VerifierReport or of a dict with the same keys."""
    return report.get(key, default) if isinstance(report, Mapping) else getattr(report, key, default)
