"""S, FDR and SPR, their fallbacks, and the reward audit.  Run: pytest tests/algos/test_rewards.py"""

import random

import numpy as np
import pytest

from rsi_lite.algos.rewards import (
    REWARDS,
    Outcome,
    audit,
    compute_reward,
    family_divisors,
    fdr_reward,
    percentile90,
    spr_reward,
    strict_reward,
)


def test_strict():
    assert strict_reward(Outcome(1, 3, 3, True)) == 1.0
    assert strict_reward(Outcome(0, 2, 3, True)) == 0.0


def test_fdr_is_linear_in_passed_checks_without_bonus():
    assert fdr_reward(Outcome(0, 41, 90, True), 82) == pytest.approx(0.5)
    assert fdr_reward(Outcome(1, 5, 5, True), 82) == pytest.approx(5 / 82)  # no completion bonus
    assert fdr_reward(Outcome(0, 90, 95, True), 82) > 1.0  # a failure above 1: the paper's problem


def test_spr_formula():
    assert spr_reward(Outcome(1, 5, 5, True), 82) == 1.0
    assert spr_reward(Outcome(0, 41, 90, True), 82, alpha=0.5) == pytest.approx(0.25)
    assert spr_reward(Outcome(0, 900, 950, True), 82, alpha=0.9) == pytest.approx(0.9)


def test_spr_success_always_outranks_failure():
    rng = random.Random(0)
    for _ in range(2000):
        d = rng.uniform(1, 200)
        alpha = rng.uniform(0, 0.999)
        total = rng.randint(1, 300)
        win = Outcome(1, total, total, True)
        lose = Outcome(0, rng.randint(0, 10 * total), total, True)
        assert spr_reward(win, d, alpha) > spr_reward(lose, d, alpha)
        assert spr_reward(lose, d, alpha) < 1.0


@pytest.mark.parametrize("kind", ["fdr", "spr"])
def test_shaped_rewards_fall_back_to_s_when_report_is_invalid(kind):
    assert compute_reward(kind, Outcome(0, 50, 60, False)) == 0.0
    assert compute_reward(kind, Outcome(1, 0, 1, False)) == 1.0


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        spr_reward(Outcome(0, 1, 1, True), alpha=1.0)
    with pytest.raises(ValueError):
        fdr_reward(Outcome(0, 1, 1, True), divisor=0)
    with pytest.raises(ValueError):
        compute_reward("xyz", Outcome(0, 1, 1, True))


def test_a_reward_added_to_the_registry_is_computed_by_name_and_the_settings_it_takes(monkeypatch):
    """`compute_reward` dispatches through `REWARDS`, so a new reward needs no second list to be computable."""
    monkeypatch.setitem(REWARDS, "half", lambda o, divisor=82.0: o.passed / divisor / 2)
    assert compute_reward("half", Outcome(0, 41, 50, True), divisor=41, alpha=0.3) == 0.5
    with pytest.raises(ValueError, match="s, fdr, spr, half"):
        compute_reward("xyz", Outcome(0, 1, 1, True))
    for kind in REWARDS:  # every registered reward, in the settings compute_reward passes
        assert 0.0 <= compute_reward(kind, Outcome(0, 41, 50, True), divisor=82, alpha=0.5) <= 1.0


def test_compute_reward_reads_reports_and_dicts():
    d = {"strict": 0, "passed": 41, "total": 50, "valid": True}
    assert compute_reward("FDR", d, divisor=82) == pytest.approx(0.5)


def test_percentile_matches_numpy():
    rng = random.Random(1)
    for _ in range(50):
        xs = [rng.randint(1, 120) for _ in range(rng.randint(1, 40))]
        assert percentile90(xs) == pytest.approx(float(np.percentile(xs, 90)))
    assert family_divisors({"a": [1, 2, 3], "b": [10]}) == {"a": pytest.approx(2.8), "b": 10}


def test_audit_reproduces_the_paper_pattern():
    # successes with few checks, failures with many passed checks: FDR pays failures a lot
    reports = [{"strict": 1, "passed": 5, "total": 5, "valid": True}] * 10
    reports += [{"strict": 0, "passed": 90, "total": 95, "valid": True}] * 3
    reports += [{"strict": 0, "passed": 7, "total": 7, "valid": True, "skipped": 0}]  # all executed passed, gate failed
    fdr, spr = audit(reports, default_divisor=82, alpha=0.5)
    assert fdr.reward == "FDR" and spr.reward == "SPR"
    assert fdr.failures == spr.failures == 4
    assert fdr.failures_at_least_one == 3 and spr.failures_at_least_one == 0
    assert fdr.failure_share > spr.failure_share
    expected = (3 * 90 / 82 + 7 / 82) / (10 * 5 / 82 + 3 * 90 / 82 + 7 / 82)
    assert fdr.failure_share == pytest.approx(expected)
    assert fdr.failures_all_executed_passed == 1
