"""`rsi_lite.report.drawn`: the kinds an RPR stage's batches drew, and how often they were solved.
Run: pytest tests/report/test_drawn.py
"""

import json

import pytest

from rsi_lite.report.drawn import drawn, main, step_files
from rsi_lite.rollout.trajectory import write_trajectories

from ..rpr.test_stage import fake_trajectories


def test_kinds_are_counted_with_their_strict_and_flagged_successes_and_an_unknown_task_is_named():
    trajs = fake_trajectories(n=6)  # tasks t0..t5, strict on even rows
    trajs[4].verifier["flags"] = ["writes outside /app"]
    kinds = {"t0": "a", "t1": "a", "t2": "a", "t3": "b", "t4": "c", "t5": "c"}
    assert drawn(trajs, kinds) == {"a": (3, 2, 0), "c": (2, 1, 1), "b": (1, 0, 0)}
    assert list(drawn(trajs, kinds)) == ["a", "c", "b"]            # most drawn first, then by name
    with pytest.raises(KeyError, match="'t5' is not among the pool's 5 tasks"):
        drawn(trajs, {k: v for k, v in kinds.items() if k != "t5"})


def test_steps_are_read_from_their_trajectories_or_while_running_from_rollouts_and_joint_ones_by_default(tmp_path):
    for k, name, phase in ((0, "trajectories.jsonl", "warmup"), (1, "trajectories.jsonl", "joint"),
                           (2, "rollouts.jsonl", "joint")):
        d = tmp_path / f"step-{k:03d}"
        d.mkdir()
        write_trajectories(fake_trajectories(n=1), d / name)
        (d / "rollout.json").write_text(json.dumps({"phase": phase}))
    (tmp_path / "step-001" / "rollouts.jsonl").write_text("")       # a finished step's rollouts are not read twice
    (tmp_path / "step-002-old").mkdir()                               # nor a directory that is not a step
    names = lambda fs: [f.parent.name + "/" + f.name for f in fs]      # noqa: E731
    assert names(step_files(tmp_path)) == ["step-000/trajectories.jsonl", "step-001/trajectories.jsonl",
                                           "step-002/rollouts.jsonl"]
    assert names(step_files(tmp_path, joint_only=True)) == ["step-001/trajectories.jsonl", "step-002/rollouts.jsonl"]
    assert [f.parent.name for f in step_files(tmp_path, (0, 1))] == ["step-000", "step-001"]
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--steps", "3:"])                         # argparse names the bad range
    with pytest.raises(SystemExit, match="no such pool directory"):
        main([str(tmp_path)])
