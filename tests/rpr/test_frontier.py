"""The PPO batch rule: the learnable frontier, the uniform fallback, and the stage reading it from its files.
Run: pytest tests/rpr/test_frontier.py
"""

import json
import random
from types import SimpleNamespace

import pytest

from rsi_lite.rollout.trajectory import read_trajectories
from rsi_lite.rpr.batches import (
    history,
    kind_map,
    probe_curves,
    probe_jobs,
    probe_points,
    probe_row,
    solved_sometimes,
    step_jobs,
    warmup_split,
)
from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.frontier import draw_batch, draw_by_kind, frontier_names, outcome_table
from rsi_lite.rpr.update import minibatch_order
from rsi_lite.tasks.spec import task_kind

from ..rpr.test_stage import fake_trajectories

NAMES = [f"t{i}" for i in range(10)]


def test_outcome_table_keeps_the_last_window_verdicts_of_each_task():
    table = outcome_table([("a", 0), ("b", 1), ("a", 1), ("a", 1), ("a", 0)], window=3)
    assert table == {"a": [1, 1, 0], "b": [1]}
    assert frontier_names(table, ["a", "b", "c"]) == ["a"]  # b always solved, c never seen


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
    assert frontier_names(outcome_table(hist, 4), NAMES) == ["t0"]
    hist += [("t0", 1)] * 4 + [("t1", 1)]
    assert frontier_names(outcome_table(hist, 4), NAMES) == ["t1"]


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


def test_the_batch_rule_comes_from_the_registry_and_a_missing_one_is_named_with_the_choices(tmp_path, monkeypatch):
    from rsi_lite.rpr.batches import BATCH_RULES
    from rsi_lite.rpr.stage import run_rpr

    tasks = [SimpleNamespace(name=n) for n in NAMES]
    cfg = RPRConfig(batch_rule="first", warmup_tasks=0, calibration_steps=0, steps=1, batch_tasks=2)
    with pytest.raises(ValueError, match=r"RPRConfig.batch_rule: 'first' is not one of frontier, kinds, uniform"):
        step_jobs(cfg, tasks, tmp_path, 0)
    # the stage refuses it before it writes or rolls out anything
    with pytest.raises(ValueError, match=r"RPRConfig.batch_rule: 'first'"):
        run_rpr(tmp_path / "run", 1, cfg)
    assert not (tmp_path / "run").exists()
    monkeypatch.setitem(BATCH_RULES, "first", lambda cfg, tasks, d, k, kinds: ([t.name for t in tasks[:2]], {"rule": "first"}))
    phase, jobs, info = step_jobs(cfg, tasks, tmp_path, 0)
    assert [t.name for t, _ in jobs] == NAMES[:2] and info == {"rule": "first", "tasks": 2}


def test_probe_curves_follow_the_first_frontier():
    p0 = {"before_step": 0, "pool_success": 0.25, "by_task": {"a": [1, 2], "b": [0, 2], "c": [1, 2], "d": [2, 2]}}
    p1 = {"before_step": 5, "pool_success": 0.5, "by_task": {"a": [2, 2], "b": [0, 2], "c": [2, 2], "d": [0, 2]}}
    c = probe_curves([p0, p1])
    assert c["first_frontier_tasks"] == 2 and c["first_frontier_success"] == [0.5, 1.0]
    assert solved_sometimes(p0["by_task"]) == ["a", "c"]  # a probe's counts, not a window of verdicts
    assert json.dumps(c)  # plain data for summary.json


# ---------------------------------------------------------------- the frontier by kind

def test_task_kind_masks_the_instance_and_keeps_the_template():
    a = task_kind("data_csv", "easy", "In /app/lotus.csv, find the points of wendy and write just that number to /app/x.txt.")
    b = task_kind("data_csv", "easy", "In /app/stone.csv, find the points of rupert and write just that number to /app/y.txt.")
    c = task_kind("data_csv", "easy", "Count the data rows of /app/v.csv (do not count the header line) and write it.")
    assert a == b == "data_csv/easy: In X find the points" and c != a
    assert task_kind("file_ops", "easy", "Write the text 'oak elm' into /app/a.txt.") == \
        task_kind("file_ops", "easy", "Write the text 'plum' into /app/b.txt.")
    assert task_kind("file_ops", "medium", "Write the text 'oak' into /app/a.txt.").startswith("file_ops/medium:")


KINDS = {**{f"a{i}": "A" for i in range(6)}, **{f"b{i}": "B" for i in range(6)}, **{f"c{i}": "C" for i in range(6)},
         **{f"d{i}": "D" for i in range(3)}}


def test_the_kind_rule_draws_distinct_least_used_tasks_of_learnable_kinds():
    # kind A: sometimes solved (learnable); B: always; C: never; D: never seen
    hist = [("a0", 1), ("a1", 0), ("a0", 0), ("b0", 1), ("b1", 1), ("c0", 0), ("c1", 0)]
    batch, info = draw_by_kind(sorted(KINDS), KINDS, hist, 5, random.Random(0), window=8, explore=0.2)
    assert info["rule"] == "kinds" and info["learnable"] == 1 and info["learnable_tasks"] == 6
    assert info["kinds"] == {"A": [1, 3], "B": [2, 2], "C": [0, 2]}
    assert info["explore"] == 1 and KINDS[batch[0]] == "D"  # the explore slot: the kind never seen
    assert len(set(batch)) == 5 and all(KINDS[t] == "A" for t in batch[1:])
    assert not {"a0", "a1"} & set(batch[1:])  # the tasks drawn least often come first


def test_the_kind_rule_weighs_kinds_by_the_variance_of_their_verdict():
    # A at 1/2 (weight 0.25) and B at 9/10 (weight 0.09): A gets about three slots in four
    hist = [("a0", 1), ("a1", 0)] + [(f"b{i % 6}", int(i < 9)) for i in range(10)]
    counts = {"A": 0, "B": 0}
    for seed in range(200):
        batch, _ = draw_by_kind([n for n in KINDS if n[0] in "ab"], KINDS, hist, 2, random.Random(seed), explore=0)
        for t in batch:
            counts[KINDS[t]] += 1
    assert 0.65 < counts["A"] / 400 < 0.85


def test_the_kind_rule_runs_out_of_tasks_before_it_repeats_one():
    hist = [("d0", 1), ("d1", 0)]
    batch, _ = draw_by_kind(["d0", "d1", "d2"], KINDS, hist, 8, random.Random(0), explore=0)
    assert sorted(batch) == ["d0", "d1", "d2"]
    batch, info = draw_by_kind(["c0", "c1"], KINDS, [("c0", 0)], 2, random.Random(0))
    assert info["rule"] == "uniform" and info["learnable"] == 0 and sorted(batch) == ["c0", "c1"]


def test_the_kind_rule_holds_the_probe_tasks_out_of_its_batches(tmp_path):
    tasks = [SimpleNamespace(name=n, family="f", difficulty="easy",
                             instruction=f"Do {n[0]} with /app/{n}.txt") for n in sorted(KINDS)]
    cfg = RPRConfig(batch_rule="kinds", warmup_tasks=0, calibration_steps=0, steps=2, batch_tasks=6, explore=0.0,
                    probe_samples=2, probe_tasks=7)
    probe = [t.name for t, _ in probe_jobs(cfg, tasks)][:7]
    _write_part(tmp_path, "probe-000", [(n, int(n.startswith("a") and i % 2 == 0)) for i, n in enumerate(probe * 2)])
    phase, jobs, info = step_jobs(cfg, tasks, tmp_path, 0)
    names = [t.name for t, _ in jobs]
    fresh_a = [n for n in sorted(KINDS) if n.startswith("a") and n not in probe]
    assert info["rule"] == "kinds" and info["learnable"] == 1  # only kind A is solved sometimes
    assert sorted(names) == fresh_a  # all of A's tasks that are not probed, none twice
    rows = probe_row(read_trajectories(tmp_path / "probe-000" / "trajectories.jsonl"), 0, kind_map(tasks))
    assert sum(e for _, e in rows["by_kind"].values()) == 14
    c = probe_curves([rows, rows])
    assert c["first_frontier_kinds_success"][0] == c["first_frontier_kinds_success"][1] and json.dumps(c)


def test_the_learnable_kinds_of_the_first_probe_are_topped_up_in_it_and_in_every_later_probe():
    """probe_kind_episodes: the first probe's kinds solved sometimes get more episodes of their probe tasks (new
    seeds), in a second pass of that probe and in one pass of each later one; the other kinds keep probe_samples."""
    from rsi_lite.rpr.stage import probe_episodes

    tasks = [SimpleNamespace(name=n, family="f", difficulty="easy",
                             instruction=f"Do {n[0]} with /app/{n}.txt") for n in sorted(KINDS)]
    kinds = kind_map(tasks)
    cfg = RPRConfig(batch_rule="kinds", probe_samples=1, probe_tasks=7, probe_kind_episodes=5)
    passes = []

    def episodes(jobs):  # kind A solved by its first task only (sometimes: learnable), B always, C and D never
        passes.append(jobs)
        trajs = fake_trajectories(len(jobs))
        for t, (task, seed) in zip(trajs, jobs):
            t.task, t.seed, t.verifier = task.name, seed, {"strict": int(task.name in ("a0", "b0", "b3"))}
        return trajs

    trajs, learnable = probe_episodes(cfg, tasks, kinds, episodes)
    first = [t.name for t, _ in passes[0]]
    assert learnable == ["f/easy: Do a with X"] and len(passes) == 2 and len(first) == 7
    a_tasks = [n for n in first if n.startswith("a")]
    assert len(a_tasks) == 2 and {t.name for t, _ in passes[1]} == set(a_tasks)  # only kind A's probe tasks
    row = probe_row(trajs, 0, kinds)
    assert row["by_kind"]["f/easy: Do a with X"][1] == 6  # 2 tasks x 3 seeds: at least 5, the tasks even
    assert row["by_kind"]["f/easy: Do b with X"][1] == sum(n.startswith("b") for n in first)  # one seed each
    assert len({(t.task, t.seed) for t in trajs}) == len(trajs)  # no episode twice
    # a later probe: the same jobs in one pass
    later, again = probe_episodes(cfg, tasks, kinds, episodes, {"learnable_kinds": learnable})
    assert again == learnable and passes[2] == passes[0] + passes[1]
    # without the setting (or under another batch rule) nothing is topped up
    plain = RPRConfig(batch_rule="frontier", probe_samples=1, probe_tasks=7, probe_kind_episodes=5)
    assert probe_episodes(plain, tasks, kinds, episodes)[1] is None and passes[-1] == passes[0]


def test_the_report_shows_each_kinds_success_at_every_probe():
    from rsi_lite.report.write import CURVE_KEYS, ppo_table

    probes = [{"before_step": b, "episodes": 4, "pool_success": s / 4, "tasks_solved": 1, "tasks_learnable": 1,
               "by_kind": {"f/easy: Write the text X into": [s, 4]}} for b, s in ((0, 1), (8, 3))]
    md = ppo_table({**{k: [] for k in CURVE_KEYS}, "probes": probes})
    assert "| f/easy: Write the text X into | 1/4 | 3/4 |" in md and "before step 8" in md
    step = {**{k: [None] for k in CURVE_KEYS}, "phase": ["joint"], "losses/explained_variance_before": [-1634.8],
            "returns/std": [0.004]}
    assert "| -1634.80 | 0.004 |" in ppo_table(step)


def test_fresh_instances_of_a_kind_come_from_seeds_no_pool_uses():
    from rsi_lite.tasks.suites import eval_fingerprints, kind_specs, pool_specs

    kinds = {"file_ops/easy: Copy the file X to", "text_processing/easy: Write the contents of X"}
    made = list(kind_specs(kinds, 3, exclude=eval_fingerprints()))
    assert sorted(task_kind(s.family, s.difficulty, s.instruction) for _, _, s in made) == sorted(sorted(kinds) * 3)
    pool_seeds = {seed for _, seed, _ in pool_specs(400)}
    assert not pool_seeds & {seed for _, seed, _ in made} and len({n for n, _, _ in made}) == 6
    with pytest.raises(ValueError, match="no generator makes"):
        list(kind_specs({"file_ops/easy: Juggle X"}, 1, start=5_000_000))


def test_the_first_frontier_is_read_from_the_first_probe(tmp_path):
    from rsi_lite.rpr.batches import first_frontier_kinds

    tasks = [SimpleNamespace(name=n, family="f", difficulty="easy", instruction=f"Do {n[0]} with /app/{n}.txt")
             for n in sorted(KINDS)]
    with pytest.raises(FileNotFoundError, match="probe-000"):
        first_frontier_kinds(tmp_path, tasks)
    _write_part(tmp_path, "probe-000", [("a0", 1), ("a1", 0), ("b0", 1), ("c0", 0)])
    (tmp_path / "probe-000" / "metrics.json").write_text('{"before_step": 0}')  # an older probe: no by_kind
    assert first_frontier_kinds(tmp_path, tasks) == ["f/easy: Do a with X"]


def test_heldout_tasks_are_written_for_the_kinds_the_first_probe_found_learnable(tmp_path):
    from rsi_lite.rpr.batches import write_heldout
    from rsi_lite.tasks import find_tasks

    copy, text = "file_ops/easy: Copy the file X to", "text_processing/easy: Write the contents of X"
    stage = tmp_path / "run" / "rpr-1"
    (stage / "probe-000").mkdir(parents=True)
    (stage / "config.json").write_text(json.dumps(RPRConfig(pool_size=8, pool=str(tmp_path / "pool")).to_dict()))
    from rsi_lite.tasks.suites import write_pool

    write_pool(tmp_path / "pool", 8)
    probe = stage / "probe-000" / "metrics.json"
    probe.write_text(json.dumps({"before_step": 0, "by_kind": {copy: [2, 2], text: [0, 2]}}))
    assert write_heldout(stage, tmp_path / "none", 2) == {} and not (tmp_path / "none").exists()  # nothing learnable
    probe.write_text(json.dumps({"before_step": 0, "by_kind": {copy: [1, 2], text: [1, 4]}}))
    made = write_heldout(stage, tmp_path / "heldout", 2)
    tasks = find_tasks(tmp_path / "heldout")
    assert sorted(made.values()) == [copy, copy, text, text] and sorted(t.name for t in tasks) == sorted(made)
    assert {task_kind(t.family, t.difficulty, t.instruction) for t in tasks} == {copy, text}
    assert not {t.name for t in tasks} & {t.name for t in find_tasks(tmp_path / "pool")}
    meta = json.loads((tmp_path / "heldout" / "kinds.json").read_text())
    assert meta["tasks"] == made and meta["kinds"] == [copy, text] and meta["per_kind"] == 2
    # 25 episodes of 2 kinds, each task run 3 times: 5 instances of each (30 episodes), not 2 (12)
    more = write_heldout(stage, tmp_path / "more", 2, min_episodes=25, runs=3)
    assert sorted(more.values()) == [copy] * 5 + [text] * 5
    assert json.loads((tmp_path / "more" / "kinds.json").read_text())["per_kind"] == 5


def test_the_warmup_split_is_the_uniform_rules_warmup_then_training_batches(tmp_path):
    """`warmup_split` (which a verl run's task rows use too) is what the uniform rule's steps draw: the warm-up
    step's tasks are its first part, the joint steps' tasks come from the rest, and every task is in one part."""
    tasks = [SimpleNamespace(name=n) for n in NAMES]
    cfg = RPRConfig(batch_rule="uniform", warmup_tasks=3, batch_tasks=3, calibration_steps=0, steps=2, seed=4)
    warm, train = warmup_split(cfg, tasks)
    assert len(warm) == 3 and len(train) == 7 and sorted(t.name for t in warm + train) == sorted(NAMES)
    assert warmup_split(cfg, tasks) == (warm, train)  # a fixed shuffle: the same split every time
    assert [t.name for t in warm] != NAMES[:3] or [t.name for t in train] != NAMES[3:]  # shuffled, not cut
    phase, jobs, _ = step_jobs(cfg, tasks, tmp_path, 0)
    assert phase == "warmup" and {t.name for t, _ in jobs} == {t.name for t in warm}
    phase, jobs, _ = step_jobs(cfg, tasks, tmp_path, 1)
    assert phase == "joint" and {t.name for t, _ in jobs} <= {t.name for t in train}
    # a pool no larger than the warm-up trains on all of it
    assert warmup_split(RPRConfig(warmup_tasks=20, seed=4), tasks)[1] == warmup_split(RPRConfig(warmup_tasks=20, seed=4), tasks)[0]
