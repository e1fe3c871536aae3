"""The PPO batch rule: the learnable frontier, the uniform fallback, and the stage reading it from its files.
Run: pytest tests/test_frontier.py
"""

import json
import random
from types import SimpleNamespace

from rsi_lite.frontier import draw_batch, learnable, outcome_table
from rsi_lite.rpr import RPRConfig, minibatch_order
from rsi_lite.rpr_batches import history, probe_curves, probe_jobs, probe_points, step_jobs

from .test_rpr import fake_trajectories

NAMES = [f"t{i}" for i in range(10)]


def test_outcome_table_keeps_the_last_window_verdicts_of_each_task():
    table = outcome_table([("a", 0), ("b", 1), ("a", 1), ("a", 1), ("a", 0)], window=3)
    assert table == {"a": [1, 1, 0], "b": [1]}
    assert learnable(table, ["a", "b", "c"]) == ["a"]  # b always solved, c never seen


def test_the_batch_is_the_frontier_plus_explore_slots():
    # t0, t1: sometimes solved; t2: always; t3..t9: never or unseen
    hist = [("t0", 1), ("t0", 0), ("t1", 0), ("t1", 1), ("t2", 1), ("t2", 1), ("t3", 0), ("t3", 0)]
    batch, info = draw_batch(NAMES, hist, 8, random.Random(0), window=4, explore=0.25)
    assert len(batch) == 8 and info == {"learnable": 2, "explore": 2, "rule": "frontier"}
    learn, explore = batch[2:], batch[:2]
    assert set(learn) == {"t0", "t1"} and learn.count("t0") == 3  # the frontier, round after round
    # explore slots go to tasks never seen before any seen one (t3 was, t2 was)
    assert not set(explore) & {"t0", "t1", "t2", "t3"}


def test_a_task_that_is_always_solved_leaves_the_frontier_and_one_newly_solved_enters():
    hist = [("t0", 1), ("t0", 0), ("t1", 0), ("t1", 0)]
    assert learnable(outcome_table(hist, 4), NAMES) == ["t0"]
    hist += [("t0", 1)] * 4 + [("t1", 1)]
    assert learnable(outcome_table(hist, 4), NAMES) == ["t1"]


def test_nothing_learnable_falls_back_to_the_uniform_draw_and_says_so():
    batch, info = draw_batch(NAMES, [("t0", 0), ("t1", 0)], 4, random.Random(1))
    assert len(set(batch)) == 4 and info["rule"] == "uniform" and info["learnable"] == 0


def test_minibatch_order_depends_on_the_seed_the_step_and_the_epoch():
    groups = list(range(12))
    orders = {tuple(minibatch_order(groups, s, k, e)) for s in (0, 1) for k in (0, 1) for e in (0, 1)}
    assert len(orders) == 8 and all(sorted(o) == groups for o in orders)
    assert minibatch_order(groups, 3, 5, 0) == minibatch_order(groups, 3, 5, 0)


def test_probes_run_first_every_n_joint_steps_and_last():
    cfg = RPRConfig(warmup_tasks=4, batch_tasks=2, calibration_steps=1, steps=6, probe_every=2)
    assert probe_points(cfg) == [0, 5, 7, 9]  # steps: 2 warm-up, 1 calibration, joint 3..8
    assert probe_points(RPRConfig(probe_samples=0)) == []
    tasks = [SimpleNamespace(name=n) for n in NAMES]
    jobs = probe_jobs(RPRConfig(probe_samples=2, probe_tasks=5), tasks)
    assert len(jobs) == 10 and len({t.name for t, _ in jobs}) == 5 and len({s for _, s in jobs}) == 2


def _write_part(d, name, verdicts):
    part = d / name
    part.mkdir(parents=True)
    trajs = fake_trajectories(len(verdicts))
    lines = []
    for t, (task, ok) in zip(trajs, verdicts):
        t.task, t.verifier = task, {"strict": ok, "passed": 0, "total": 1}
        lines.append(t.to_json())
    (part / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
    (part / "DONE").write_text("")


def test_step_jobs_draw_from_the_verdicts_of_earlier_probes_and_steps(tmp_path):
    tasks = [SimpleNamespace(name=n) for n in NAMES]
    cfg = RPRConfig(warmup_tasks=0, calibration_steps=0, steps=3, batch_tasks=4, explore=0.0, rollouts_per_task=2)
    _write_part(tmp_path, "probe-000", [("t0", 1), ("t0", 0), ("t5", 0), ("t5", 0)])
    _write_part(tmp_path, "step-000", [("t5", 1), ("t0", 1)])
    assert history(tmp_path, 0) == [("t0", 1), ("t0", 0), ("t5", 0), ("t5", 0)]
    phase, jobs, info = step_jobs(cfg, tasks, tmp_path, 0)
    assert phase == "joint" and {t.name for t, _ in jobs} == {"t0"} and len(jobs) == 8
    assert len({s for _, s in jobs}) == 8  # every episode its own seed
    phase, jobs, info = step_jobs(cfg, tasks, tmp_path, 1)  # step 0 made t5 learnable too
    assert {t.name for t, _ in jobs} == {"t0", "t5"} and info["learnable"] == 2
    # the same files give the same batch (a sharded run draws it in another process)
    assert [(t.name, s) for t, s in step_jobs(cfg, tasks, tmp_path, 1)[1]] == [(t.name, s) for t, s in jobs]
    uni = step_jobs(RPRConfig.from_dict({**cfg.to_dict(), "batch_rule": "uniform"}), tasks, tmp_path, 1)
    assert uni[2]["rule"] == "uniform" and len({t.name for t, _ in uni[1]}) == 4


def test_probe_curves_follow_the_first_frontier():
    p0 = {"before_step": 0, "pool_success": 0.25, "by_task": {"a": [1, 2], "b": [0, 2], "c": [1, 2], "d": [2, 2]}}
    p1 = {"before_step": 5, "pool_success": 0.5, "by_task": {"a": [2, 2], "b": [0, 2], "c": [2, 2], "d": [0, 2]}}
    c = probe_curves([p0, p1])
    assert c["first_frontier_tasks"] == 2 and c["first_frontier_success"] == [0.5, 1.0]
    assert json.dumps(c)  # plain data for summary.json
