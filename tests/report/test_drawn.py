"""`rsi_lite.report.drawn`: the kinds an RPR stage's batches drew, and how often they were solved.
Run: pytest tests/report/test_drawn.py
"""

import pytest

from rsi_lite.report.drawn import drawn, step_files
from rsi_lite.rollout.trajectory import write_trajectories

from ..rpr.test_stage import fake_trajectories


def test_kinds_are_counted_with_their_strict_successes_and_an_unknown_task_is_named():
    trajs = fake_trajectories(n=6)  # tasks t0..t5, strict on even rows
    kinds = {"t0": "a", "t1": "a", "t2": "a", "t3": "b", "t4": "c", "t5": "c"}
    assert drawn(trajs, kinds) == {"a": (3, 2), "c": (2, 1), "b": (1, 0)}
    assert list(drawn(trajs, kinds)) == ["a", "c", "b"]            # most drawn first, then by name
    with pytest.raises(KeyError, match="'t5' is not in the pool's tasks"):
        drawn(trajs, {k: v for k, v in kinds.items() if k != "t5"})


def test_a_step_is_read_from_its_trajectories_or_while_it_runs_from_its_rollouts(tmp_path):
    for k, name in ((0, "trajectories.jsonl"), (1, "trajectories.jsonl"), (2, "rollouts.jsonl")):
        (tmp_path / f"step-{k:03d}").mkdir()
        write_trajectories(fake_trajectories(n=1), tmp_path / f"step-{k:03d}" / name)
    (tmp_path / "step-001" / "rollouts.jsonl").write_text("")  # a finished step's rollouts are not read twice
    assert [f.parent.name + "/" + f.name for f in step_files(tmp_path, None)] == [
        "step-000/trajectories.jsonl", "step-001/trajectories.jsonl", "step-002/rollouts.jsonl"]
    assert [f.parent.name for f in step_files(tmp_path, (1, 2))] == ["step-001", "step-002"]
