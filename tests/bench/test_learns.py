"""`python -m rsi_lite.bench.learns`: its statistics (the paired bootstrap over tasks, the per-kind and with-room
figures, the verdicts), its config's errors, and its parts' order and resumption (on stand-in parts: the real
stages run in tests/rpr and tests/rsr, and the benchmark itself for an hour on the bundled model).

Run: pytest tests/bench/test_learns.py
"""

import json

import pytest

from rsi_lite.bench import learns
from rsi_lite.bench.learns import Bench, LearnsConfig
from rsi_lite.bench.learns_table import verdicts
from rsi_lite.eval.paired import compare, paired_bootstrap


def test_a_change_every_task_shares_has_an_interval_of_that_change_alone():
    r = paired_bootstrap([0.2, 0.5, 0.0, 1.0], [0.4, 0.7, 0.2, 1.2], resamples=500)
    assert r["delta"] == pytest.approx(0.2) and r["low"] == pytest.approx(0.2) and r["high"] == pytest.approx(0.2)


def test_the_interval_holds_the_change_and_narrows_with_more_tasks():
    before = [0.0, 1.0, 0.0, 1 / 3, 2 / 3, 0.0] * 3
    after = [1.0, 1.0, 0.0, 1 / 3, 1.0, 0.0] * 3
    few = paired_bootstrap(before[:6], after[:6], resamples=2000)
    many = paired_bootstrap(before, after, resamples=2000)
    assert few["low"] <= few["delta"] <= few["high"] and many["low"] <= many["delta"] <= many["high"]
    assert many["high"] - many["low"] < few["high"] - few["low"]
    assert paired_bootstrap(before, after, resamples=2000, seed=3) == paired_bootstrap(before, after, resamples=2000,
                                                                                        seed=3)


def test_pairs_are_resampled_together_a_task_that_always_gains_is_never_split_from_its_start():
    # unpaired, before and after resampled apart, these would give an interval reaching below 0
    before, after = [0.0, 1.0] * 10, [0.1, 1.0] * 10
    r = paired_bootstrap(before, after, resamples=2000)
    assert r["low"] >= 0 and r["delta"] == pytest.approx(0.05)


def test_compare_splits_by_kind_and_keeps_the_kinds_with_room():
    before = {"a1": ("A", 0.0), "a2": ("A", 1 / 3), "b1": ("B", 1.0), "b2": ("B", 1.0)}
    after = {"a1": ("A", 1.0), "a2": ("A", 1.0), "b1": ("B", 0.0), "b2": ("B", 1 / 3)}
    c = compare(before, after, room=0.7, resamples=500)
    assert set(c["by_kind"]) == {"A", "B"}
    assert c["room"]["kinds"] == ["A"] and c["room"]["delta"] == pytest.approx((1 + 2 / 3) / 2)
    v = verdicts(c, train=False, targets={"train": 0.2, "room": 0.1})
    assert v["measured_on"] == "room" and v["kinds_fallen"] == ["B"]
    assert verdicts(c, train=True, targets={"train": 0.2, "room": 0.1})["measured_on"] == "all"


def test_a_gain_inside_its_interval_meets_no_target():
    before = {f"t{i}": ("A", 0.0 if i % 2 else 1.0) for i in range(10)}
    after = {f"t{i}": ("A", 1.0 if i % 2 else 0.0) for i in range(10)}
    after["t0"] = ("A", 1.0)  # +0.1 on average, but the tasks disagree
    v = verdicts(compare(before, after, room=None, resamples=2000), train=True, targets={"train": 0.05, "room": 0.1})
    assert v["gain"] == pytest.approx(0.1) and not v["outside_interval"] and not v["meets_target"]


@pytest.mark.parametrize("doc, field", [({"methods": {"ppo": {}}, "sample": 3}, "'sample'"),
                                        ({"methods": {"ppo": {}}, "samples": "3"}, "'samples'"),
                                        ({"methods": {}}, "'methods'"),
                                        ({"methods": {"g": {"estimator": "grpo"}}}, "methods.g"),
                                        ({"methods": {"ppo": {}}, "start": "missing.json"}, "'start'")])
def test_a_bad_config_names_its_file_and_field(tmp_path, doc, field):
    path = tmp_path / "learns.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError) as e:
        LearnsConfig.load(path)
    assert str(path) in str(e.value) and field in str(e.value)


def test_the_committed_config_loads_and_gives_both_methods_the_same_episodes():
    cfg = LearnsConfig.load(learns.DEFAULT_CONFIG)
    from rsi_lite.rpr.batches import schedule
    from rsi_lite.rpr.config import RPRConfig

    def episodes(m):
        c = RPRConfig.from_dict(m)
        return sum(c.batch_tasks * (1 if phase == "warmup" else c.rollouts_per_task) for phase, _ in schedule(c))

    assert {"ppo", "grpo"} <= set(cfg.methods)
    assert len({episodes(m) for m in cfg.methods.values()}) == 1  # every method on the same budget of episodes
    assert cfg.temperatures[0] == cfg.rollout["temperature"]  # the first measurement is at the training temperature


class _T:
    """A held-out episode as the statistics read it."""

    def __init__(self, task, strict):
        self.task, self.verifier = task, {"strict": strict}


def test_the_parts_run_in_order_once_and_a_rerun_only_rewrites_the_results(tmp_path, monkeypatch):
    """Stand-in parts: every part runs once, in the documented order, the cost of each attempt is kept, and a second
    `go` (a resume after the end) runs nothing again."""
    ran = []
    kinds = {"h0": "A", "h1": "A", "h2": "B"}
    cfg = LearnsConfig(methods={"ppo": {}, "grpo": {"estimator": "grpo", "rollouts_per_task": 2, "warmup_tasks": 0,
                                                    "calibration_steps": 0}}, seeds=[0], samples=1)

    def start(self, adopt=None):
        ran.append("start")
        return "ckpt"

    def kinds_part(self, ckpt):
        d = self.out / "kinds"
        if not (d / "DONE").exists():
            ran.append("kinds")
            d.mkdir(parents=True)
            (d / "probe.json").write_text(json.dumps({"learnable": ["A", "B"]}))
            (d / "DONE").write_text("")
        return ["A", "B"]

    def heldout(self, k):
        d = self.out / "heldout"
        if not d.exists():
            ran.append("heldout")
            d.mkdir()
            (d / "kinds.json").write_text(json.dumps({"tasks": kinds}))
        return kinds

    def measure(self, name, ckpt, T):
        d = self.out / name
        if not (d / "DONE").exists():
            ran.append(name)
            d.mkdir(parents=True)
            won = 1 if "after" in name else 0
            (d / "trajectories.jsonl").write_text("")
            (d / "rates.json").write_text(json.dumps({n: won for n in kinds}))
            (d / "DONE").write_text("")
            self.timed(name, lambda: None)
        return d

    def train(self, method, seed, ckpt, k):
        d = self.out / f"{method}-s{seed}" / "rpr-1"
        if not (d / "DONE").exists():
            ran.append(f"{method}-s{seed}")
            d.mkdir(parents=True)
            (d / "DONE").write_text("")
        return str(d / "actor")

    def read(path):
        rates = json.loads((path.parent / "rates.json").read_text())
        return [_T(n, s) for n, s in rates.items()]

    for name, fn in {"start": start, "kinds": kinds_part, "heldout": heldout, "measure": measure,
                     "train": train}.items():
        monkeypatch.setattr(Bench, name, fn)
    monkeypatch.setattr("rsi_lite.rollout.trajectory.read_trajectories", read)
    doc = Bench(tmp_path, cfg, log=lambda *_: None).go()
    assert ran == ["start", "kinds", "heldout", "before-t1.0", "before-t0.6", "ppo-s0", "ppo-s0/after-t1.0",
                   "ppo-s0/after-t0.6", "grpo-s0", "grpo-s0/after-t1.0", "grpo-s0/after-t0.6"]
    assert [(r["method"], r["temperature"]) for r in doc["rows"]] == [("ppo", 1.0), ("ppo", 0.6), ("grpo", 1.0),
                                                                       ("grpo", 0.6)]
    assert all(r["all"]["delta"] == 1.0 and r["verdict"]["meets_target"] for r in doc["rows"])
    assert (tmp_path / "results.md").read_text().count("| ppo |") == 4  # two rows and the seeds' two means
    ran.clear()
    Bench(tmp_path, cfg, log=lambda *_: None).go()
    assert ran == ["start"]  # the stand-in start always reports itself; nothing else reran


def test_a_stop_file_ends_the_benchmark_before_its_next_part(tmp_path):
    """`touch OUT/STOP`: the next part does not start (no wall recorded for it), the run exits 0, the file is gone."""
    bench = Bench(tmp_path, LearnsConfig(), log=lambda *_: None)
    bench.timed("kinds", lambda: None)
    (tmp_path / "STOP").touch()
    with pytest.raises(SystemExit) as stopped:
        bench.timed("heldout", lambda: pytest.fail("a part started after STOP"))
    assert stopped.value.code == 0 and not (tmp_path / "STOP").exists()
    assert set(json.loads((tmp_path / "cost.json").read_text())) == {"kinds"}


def test_a_part_s_wall_leaves_out_the_seconds_the_process_stood_stopped(tmp_path, monkeypatch):
    """A part during which the process was stopped (`kill -STOP`, seen by `timing.PAUSES`) records its wall less the
    pause, and the pause beside it under `paused:PART`; a part with no pause records no such entry."""
    from rsi_lite import timing

    clock = iter([100.0, 160.0, 200.0, 205.0])                           # two parts: 60 s, then 5 s of wall
    paused = iter([0.0, 40.0, 40.0, 40.0])                               # the first stood stopped 40 s of its 60
    monkeypatch.setattr(timing, "_now", lambda: next(clock))
    monkeypatch.setattr(timing.PAUSES, "total", lambda: next(paused))
    bench = Bench(tmp_path, LearnsConfig(), log=lambda *_: None)
    bench.timed("kinds", lambda: None)
    bench.timed("heldout", lambda: None)
    assert json.loads((tmp_path / "cost.json").read_text()) == {"kinds": [20.0], "paused:kinds": [40.0],
                                                                 "heldout": [5.0]}
    assert bench.wall("kinds", "heldout") == 25.0


def _rsr_stage(d, **changes):
    """A finished self-rewrite stage as a loop leaves it: DONE, checkpoint/, config.json (the start recipe, changed)."""
    from dataclasses import asdict

    from rsi_lite.rsr.config import RSRConfig

    cfg = asdict(RSRConfig.from_dict(LearnsConfig.load(learns.DEFAULT_CONFIG).start))
    for key, value in changes.items():
        *outer, last = key.split(".")
        node = cfg
        for k in outer:
            node = node[k]
        node[last] = value
    (d / "checkpoint").mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "DONE").write_text("")
    return d


def test_a_loops_rsr_1_of_the_same_recipe_is_adopted_once_and_never_remade(tmp_path, monkeypatch):
    """`--start RUN/rsr-1`: a stage that differs from the start recipe only in its pool's path and its seeds is
    recorded in start/adopted.json and its checkpoint used, then and on every resume; no self-rewrite runs."""
    stage = _rsr_stage(tmp_path / "run" / "rsr-1", **{"pool": str(tmp_path / "run" / "pool"), "rollout.seed": 1000,
                                                     "sft.seed": 0})
    monkeypatch.setattr("rsi_lite.rsr.stage.run_rsr", lambda *a, **k: pytest.fail("the start was remade"))
    cfg = LearnsConfig.load(learns.DEFAULT_CONFIG)
    size = cfg.start["pool_size"]  # the loop's pool, generated at the recipe's size (its tasks not written out here)
    (tmp_path / "run" / "pool").mkdir(parents=True)
    monkeypatch.setattr("rsi_lite.tasks.task.find_tasks", lambda path: [path] * size)
    bench = Bench(tmp_path / "out", cfg, log=lambda *_: None)
    assert bench.start(stage) == str(stage / "checkpoint")
    doc = json.loads((tmp_path / "out" / "start" / "adopted.json").read_text())
    assert doc["stage"] == str(stage) and set(doc["differs"]) <= set(learns.ADOPT_MAY_DIFFER)
    assert "rollout.seed" in doc["differs"]
    assert Bench(tmp_path / "out", cfg, log=lambda *_: None).start() == str(stage / "checkpoint")


@pytest.mark.parametrize("changes,needle", [({"sft.lr": 1e-3}, "sft.lr"), ({"pool_size": 7}, "pool_size")])
def test_a_stage_of_another_recipe_is_refused_naming_its_file_and_fields(tmp_path, changes, needle):
    stage = _rsr_stage(tmp_path / "rsr-1", **changes)
    bench = Bench(tmp_path / "out", LearnsConfig.load(learns.DEFAULT_CONFIG), log=lambda *_: None)
    with pytest.raises(SystemExit, match=needle) as e:
        bench.start(stage)
    assert str(stage / "config.json") in str(e.value)
    assert not (tmp_path / "out" / "start" / "adopted.json").exists()


def test_an_unfinished_stage_is_refused(tmp_path):
    stage = _rsr_stage(tmp_path / "rsr-1")
    (stage / "DONE").unlink()
    with pytest.raises(SystemExit, match="not a finished self-rewrite stage"):
        Bench(tmp_path / "out", LearnsConfig.load(learns.DEFAULT_CONFIG), log=lambda *_: None).start(stage)


def test_a_stage_whose_logs_or_rollout_scheduling_differ_is_adopted_and_a_pool_of_another_size_is_not(tmp_path):
    from rsi_lite.tasks.suites import write_pool

    cfg = LearnsConfig.load(learns.DEFAULT_CONFIG)
    stage = _rsr_stage(tmp_path / "a" / "rsr-1", **{"sft.report_to": "tensorboard", "rollout.workers": 2,
                                                   "rollout.batch_size": 8})
    assert Bench(tmp_path / "out-a", cfg, log=lambda *_: None).start(stage) == str(stage / "checkpoint")
    write_pool(tmp_path / "pool", 3)
    stage = _rsr_stage(tmp_path / "b" / "rsr-1", pool=str(tmp_path / "pool"))
    with pytest.raises(SystemExit, match="holds 3 tasks"):
        Bench(tmp_path / "out-b", cfg, log=lambda *_: None).start(stage)


def test_a_loops_relative_pool_path_is_found_from_another_directory_and_a_missing_pool_is_named(tmp_path,
                                                                                                 monkeypatch):
    """A loop started as `rsi-lite run --out runs/cpu` names its pool `runs/cpu/pool`, relative to where it ran; a
    benchmark started elsewhere finds it above the stage (2026-12-07: "holds 0 tasks" for a pool that was there)."""
    cfg = LearnsConfig.load(learns.DEFAULT_CONFIG)
    (tmp_path / "main" / "runs" / "cpu" / "pool").mkdir(parents=True)
    monkeypatch.setattr("rsi_lite.tasks.task.find_tasks", lambda path: [path] * cfg.start["pool_size"])
    stage = _rsr_stage(tmp_path / "main" / "runs" / "cpu" / "rsr-1", pool="runs/cpu/pool")
    (tmp_path / "clone").mkdir()
    monkeypatch.chdir(tmp_path / "clone")
    assert Bench(tmp_path / "out", cfg, log=lambda *_: None).start(stage) == str(stage / "checkpoint")
    stage = _rsr_stage(tmp_path / "other" / "rsr-1", pool="runs/gone/pool")
    with pytest.raises(SystemExit, match=r"runs/gone/pool .*config.json, field 'pool'.* not a directory"):
        Bench(tmp_path / "out-2", cfg, log=lambda *_: None).start(stage)


def test_another_start_for_a_benchmark_that_has_one_is_refused(tmp_path):
    cfg = LearnsConfig.load(learns.DEFAULT_CONFIG)
    first, second = _rsr_stage(tmp_path / "a" / "rsr-1"), _rsr_stage(tmp_path / "b" / "rsr-1")
    Bench(tmp_path / "out", cfg, log=lambda *_: None).start(first)
    assert Bench(tmp_path / "out", cfg, log=lambda *_: None).start(first) == str(first / "checkpoint")
    with pytest.raises(SystemExit, match="already adopted"):
        Bench(tmp_path / "out", cfg, log=lambda *_: None).start(second)
    made = tmp_path / "own" / "start" / "rsr-1"
    made.mkdir(parents=True)
    (made / "DONE").write_text("")
    with pytest.raises(SystemExit, match="made its own starting checkpoint"):
        Bench(tmp_path / "own", cfg, log=lambda *_: None).start(first)
