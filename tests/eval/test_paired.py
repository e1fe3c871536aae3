"""`python -m rsi_lite.eval.paired BEFORE AFTER --kinds FILE`: two evaluations of the same held-out tasks compared
task by task. `pytest tests/eval/test_paired.py`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rsi_lite.eval.paired import main
from rsi_lite.rollout.trajectory import write_trajectories

from .test_turns import episode


def test_two_evaluation_directories_give_the_change_per_kind_and_each_turns_replies(tmp_path):
    cmd, done = "```bash\nls\n```", "TASK COMPLETE"
    names = [f"t{i}" for i in range(6)]
    (tmp_path / "kinds.json").write_text(json.dumps({"per_kind": 3, "tasks": {n: "AB"[i % 2] for i, n in enumerate(names)}}))
    for d, won in (("before", lambda i: i % 2 == 0), ("after", lambda i: True)):
        (tmp_path / d).mkdir()
        write_trajectories([replace(episode([cmd, done if won(i) else "prose"], [[-0.1], [-0.2]]), task=n,
                                    verifier={"strict": int(won(i))}) for i, n in enumerate(names)],
                           tmp_path / d / "trajectories.jsonl")
    out = main([str(tmp_path / "before"), str(tmp_path / "after"), "--kinds", str(tmp_path / "kinds.json")]).splitlines()
    assert out[1].split()[:5] == ["all", "50.0", "->", "100.0", "+50.0"] and out[1].endswith("6 tasks")
    assert out[2].startswith("A ") and "+0.0" in out[2] and out[3].startswith("B ") and "+100.0" in out[3]
    assert "turn 2: unparsed 50%, done 50%" in out[4] and "turn 2: unparsed 0%, done 100%" in out[5]
    with pytest.raises(SystemExit, match="nowhere/trajectories.jsonl: missing"):
        main([str(tmp_path / "nowhere"), str(tmp_path / "after"), "--kinds", str(tmp_path / "kinds.json")])
    (tmp_path / "bad.json").write_text(json.dumps({"per_kind": 3}))
    with pytest.raises(SystemExit, match="bad.json: no 'tasks' object"):
        main([str(tmp_path / "before"), str(tmp_path / "after"), "--kinds", str(tmp_path / "bad.json")])


def test_without_a_kinds_file_two_stages_evaluations_compare_suite_by_suite(tmp_path):
    """`python -m rsi_lite.eval.paired RUN/eval-rsr-1 RUN/eval-rpr-1`: each task's group is its suite."""
    cmd = "```bash\nls\n```"
    tasks = [("core-0", "core"), ("core-1", "core"), ("val-0", "val"), ("val-1", "val")]
    for d, won in (("before", {"core-0", "val-0"}), ("after", {"core-0", "core-1"})):
        (tmp_path / d).mkdir()
        write_trajectories([replace(episode([cmd], [[-0.1]]), task=n, suite=s, verifier={"strict": int(n in won)})
                            for n, s in tasks], tmp_path / d / "trajectories.jsonl")
    out = main([str(tmp_path / "before"), str(tmp_path / "after")]).splitlines()
    assert out[1].split()[:5] == ["all", "50.0", "->", "50.0", "+0.0"]
    assert out[2].split()[:5] == ["core", "50.0", "->", "100.0", "+50.0"]
    assert out[3].split()[:5] == ["val", "50.0", "->", "0.0", "-50.0"]
