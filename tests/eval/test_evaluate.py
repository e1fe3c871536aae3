"""Evaluation figures (pure) and the eval command on a tiny budget.  Run: pytest tests/eval/test_evaluate.py"""

import json

import pytest

from rsi_lite.eval.evaluate import resolve_suite, summarize, table
from rsi_lite.rollout.trajectory import Trajectory

from ..conftest import TASKS


def _traj(task, seed, strict, passed, total, suite="core", family="f", difficulty="easy"):
    return Trajectory(task=task, task_path="", suite=suite, family=family, difficulty=difficulty, harness="plain",
                      action_format="bash", policy="base", seed=seed, system="", messages=[], token_ids=[1, 2],
                      action_mask=[0, 1], logprobs=[0.0, -1.0], turn_spans=[[1, 2]], finish_reason="complete", turns=1,
                      verifier={"strict": strict, "passed": passed, "total": total, "valid": True},
                      rewards={}, tokens={"prompt": 1, "generated": 1, "total": 2}, timings={})


def test_mean_at_k_is_the_mean_of_run_successes():
    trajs = [_traj("a", 0, 1, 3, 3), _traj("b", 0, 0, 1, 3), _traj("a", 1, 0, 2, 3), _traj("b", 1, 0, 0, 3),
             _traj("a", 2, 1, 3, 3), _traj("b", 2, 1, 3, 3, family="g", difficulty="hard")]
    r = summarize(trajs, k=3)["core"]
    assert r["runs"] == [0.5, 0.0, 1.0] and r["success"] == pytest.approx(0.5) and r["k"] == 3
    assert r["strict"] == 3 and r["episodes"] == 6 and r["n_tasks"] == 2
    assert r["process_reward"] == pytest.approx((1 + 1 / 3 + 2 / 3 + 0 + 1 + 1) / 6)
    assert r["by_family"]["g"] == {"success": 1.0, "episodes": 1}
    assert table({"core": r}).splitlines()[1].split()[:4] == ["core", "2", "3", "50.00%"]  # suite, tasks, k, Mean@k


def test_runs_per_task_can_differ_by_suite():
    from rsi_lite.eval.evaluate import suite_k

    k = {"core": 3, "*": 1}
    trajs = [_traj("a", s, 1, 3, 3) for s in range(3)] + [_traj("v", 0, 0, 1, 3, suite="val")]
    r = summarize(trajs, k)
    assert (r["core"]["k"], r["val"]["k"]) == (3, 1) and "note" not in r["core"] and "note" not in r["val"]
    assert summarize(trajs, {"core": 4, "*": 1})["core"]["note"] == "3 runs found, 4 asked for"
    assert [suite_k(k, s) for s in ("core", "val")] == [3, 1] and suite_k(2, "val") == 2
    with pytest.raises(ValueError, match="'hard'"):
        suite_k({"core": 3}, "hard")  # not named and no "*": an error, not a silent default


def test_robust_success_leaves_out_the_flagged_successes_when_they_were_replayed():
    trajs = [_traj("a", 0, 1, 3, 3), _traj("b", 0, 1, 3, 3), _traj("a", 1, 0, 2, 3), _traj("b", 1, 1, 3, 3)]
    assert "robust_success" not in summarize(trajs, k=2)["core"]  # not replayed: nothing to say
    for t, flags in zip([t for t in trajs if t.verifier["strict"]], [[], ["input_specific"], []]):
        t.verifier["flags"] = flags
    r = summarize(trajs, k=2)["core"]
    assert r["success"] == pytest.approx(0.75) and r["robust_success"] == pytest.approx(0.5)
    assert r["robust_strict"] == 2 and r["flagged"] == {"input_specific": 1}
    assert "robust" in table({"core": r}) and " 50.00%" in table({"core": r})


def test_suite_names_and_directories_resolve():
    name, tasks = resolve_suite("swr", TASKS)
    assert name == "swr" and len(tasks) == 20
    name, tasks = resolve_suite(str(TASKS / "lhtb"), TASKS)
    assert name == "lhtb" and len(tasks) == 12
    with pytest.raises(FileNotFoundError, match="nowhere"):
        resolve_suite("nowhere", TASKS)


def test_eval_command_end_to_end(tmp_path, bwrap_ok):
    from rsi_lite.cli.main import main

    out = tmp_path / "eval"
    assert main(["eval", "--suite", "core", "--k", "2", "--limit", "2", "--spread", "--max-turns", "1",
                 "--max-new-tokens", "24", "--out", str(out)]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["spread"] and {json.loads(line)["task"] for line in (out / "trajectories.jsonl").read_text().splitlines()} \
        == {"core-000-file_ops-easy", "core-022-scripting-easy"}  # spread: the first and the middle task
    core = doc["suites"]["core"]
    assert core["k"] == 2 and core["episodes"] == 4 and core["n_tasks"] == 2 and 0 <= core["success"] <= 1
    assert (out / "results.html").is_file() and len((out / "trajectories.jsonl").read_text().splitlines()) == 4


def test_subset_spreads_a_small_evaluation_over_the_suite():
    from rsi_lite.eval.evaluate import subset

    tasks = list(range(45))
    assert subset(tasks, 3) == [0, 1, 2]
    assert subset(tasks, 3, spread=True) == [0, 15, 30]
    assert subset(tasks, None, spread=True) == tasks and subset(tasks, 99, spread=True) == tasks


def test_a_limit_can_name_suites():
    from rsi_lite.eval.evaluate import suite_limit

    lim = {"core": 15, "val": None, "*": 2}
    assert [suite_limit(lim, s) for s in ("core", "val", "hard")] == [15, None, 2]
    assert suite_limit(3, "core") == 3 and suite_limit(None, "core") is None
    assert suite_limit({"core": 15}, "hard") is None  # not named, no "*": every task


def test_the_floor_is_what_untouched_workspaces_score_on_the_evaluated_tasks(tmp_path, bwrap_ok):
    """The stage table's floor row: core's tasks fail untouched; lhtb's project keeps a check that passes with no
    action (its data left unchanged), so its process reward starts above 0 for any policy."""
    from rsi_lite.eval.evaluate import floor

    doc = floor(["core", "lhtb"], tmp_path / "f", limit={"core": 2, "*": 1}, spread=True, workers=2)
    assert json.loads((tmp_path / "f" / "floor.json").read_text()) == doc
    core, lhtb = doc["suites"]["core"], doc["suites"]["lhtb"]
    assert set(core["tasks"]) == {"core-000-file_ops-easy", "core-022-scripting-easy"}  # evaluate's picks
    assert core["strict"] == 0 and core["success"] == 0.0 and lhtb["strict"] == 0
    (passed, total), = lhtb["tasks"].values()
    assert 0 < passed < total and lhtb["process_reward"] == passed / total
