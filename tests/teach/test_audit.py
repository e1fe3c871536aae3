"""Notebook 03's reward audit (`rsi_lite.teach.audit`): the shares from the rewards paid, the same as the report's,
and the reference rows copied as their sources print them. Run: pytest tests/teach/test_audit.py
"""

import re

import pytest

from rsi_lite.rollout.trajectory import Trajectory, write_trajectories
from rsi_lite.teach.audit import KIT_AUDIT_RPR1, PAPER_AUDIT, audit_table, episodes_audit, stage_episodes

from ..conftest import REPO


def _traj(strict: int, fdr: float, spr: float, task: str = "t") -> Trajectory:
    return Trajectory(task=task, task_path="", suite="pool", family="f", difficulty="easy", harness="plain",
                      action_format="bash", policy="base", seed=0, system="", messages=[], token_ids=[1, 2],
                      action_mask=[0, 1], logprobs=[0.0, -1.0], turn_spans=[[1, 2]], finish_reason="complete", turns=1,
                      verifier={"strict": strict, "passed": 1, "total": 2, "valid": True},
                      rewards={"s": float(strict), "fdr": fdr, "spr": spr}, tokens={}, timings={})


BATCH = [_traj(1, 0.8, 1.0), _traj(0, 1.2, 0.5), _traj(0, 0.0, 0.0)]


def test_failures_share_and_those_paid_a_success_are_counted_from_the_rewards_paid():
    row = episodes_audit(BATCH, "mine")
    assert row.episodes == 3 and row.source == "mine"
    assert row.fdr_share == pytest.approx(60.0)           # 1.2 of 2.0
    assert row.spr_share == pytest.approx(100 / 3)        # 0.5 of 1.5
    assert (row.fdr_at_least_one, row.spr_at_least_one) == (1, 0)
    # a success paid 1.0 is not a failure at 1.0; no reward at all gives a share of 0, not a division by zero
    assert episodes_audit([_traj(1, 1.0, 1.0)], "x").fdr_at_least_one == 0
    assert episodes_audit([_traj(0, 0.0, 0.0)], "x").fdr_share == 0.0


def test_a_stage_directory_is_read_step_by_step_and_agrees_with_the_report(tmp_path):
    from rsi_lite.report.write import failure_shares

    stage = tmp_path / "rpr-1"
    write_trajectories(BATCH[:2], stage / "step-000" / "trajectories.jsonl")
    write_trajectories(BATCH[2:], stage / "step-001" / "trajectories.jsonl")
    trajs = stage_episodes(stage)
    assert len(trajs) == 3
    row, report = episodes_audit(trajs, "stage"), failure_shares(stage)
    assert row.fdr_share == pytest.approx(100 * report["fdr"]) and row.spr_share == pytest.approx(100 * report["spr"])
    assert stage_episodes(tmp_path / "absent") == []


def test_the_table_has_a_row_per_source_and_says_which_figures_a_source_lacks():
    text = audit_table([PAPER_AUDIT, KIT_AUDIT_RPR1, episodes_audit(BATCH, "yours")])
    lines = text.splitlines()
    paper, kit, mine = lines[2:5]
    assert "4,352" in paper and "50.09%" in paper and "28.72%" in paper and paper.split()[-2:] == ["158", "0"]
    assert "156" in kit and "22.6%" in kit and "9.1%" in kit and kit.split()[-2:] == ["n/a", "n/a"]
    assert "60.00%" in mine and "33.33%" in mine and mine.split()[-2:] == ["1", "0"]


def _flat(path: str) -> str:
    return re.sub(r"\s+", " ", (REPO / path).read_text())


def test_the_reference_rows_are_the_figures_their_sources_print():
    paper = _flat("docs/paper.md")
    assert "audit of 4,352 trajectories: failures took 50.09% of all FDR reward; 158 failures scored >= 1.0" in paper
    assert "Rescored with SPR: failures' share 28.72%, failures scoring >= 1.0: zero." in paper
    assert (PAPER_AUDIT.episodes, PAPER_AUDIT.fdr_share, PAPER_AUDIT.spr_share) == (4352, 50.09, 28.72)
    assert (PAPER_AUDIT.fdr_at_least_one, PAPER_AUDIT.spr_at_least_one) == (158, 0)
    log = _flat("docs/experiments.md")
    assert "Failures' share of the reward over the training episodes: RPR-1 (156) FDR 22.6%, SPR 9.1%" in log
    assert (KIT_AUDIT_RPR1.episodes, KIT_AUDIT_RPR1.fdr_share, KIT_AUDIT_RPR1.spr_share) == (156, 22.6, 9.1)
