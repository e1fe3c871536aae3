"""The run's report: the stage table (with its floor row), the claims and their spread, several seeds in one
table, report.json's shape, and the room for refinement. `pytest tests/report/test_write.py`. The runs are made by
the loop with recorded stages (`fake_stages`, in conftest.py)."""

from __future__ import annotations

import json

import pytest

from rsi_lite.loop.phases import start
from rsi_lite.report.claims import claims as rep_claims
from rsi_lite.report.write import below_floor, build, stage_table, write_report


def test_a_second_seeds_run_joins_the_report_with_its_spread(tmp_path, fake_stages):
    """`rsi-lite report RUN OTHER --out DIR`: a one-cycle run of seed 1 joins a five-phase run of seed 0. Rows
    both ran get the mean and sd over the seeds, and the claims' spread spans both seeds' runs; rows only one ran
    keep that seed's figures; a repeated seed or another profile is refused, naming the file."""
    from rsi_lite.cli.main import main as cli

    start(tmp_path / "a", "tiny", log=lambda *_: None)
    start(tmp_path / "b", "tiny", seeds=(1,), cycles=1, log=lambda *_: None)
    res = tmp_path / "b" / "eval-rsr-1" / "results.json"
    doc = json.loads(res.read_text())
    doc["suites"]["core"].update(success=0.7, runs=[0.6, 0.8])
    res.write_text(json.dumps(doc))

    assert cli(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "both")]) == 0
    rep = json.loads((tmp_path / "both" / "report.json").read_text())
    assert rep["seeds"] == [0, 1] and rep["also"] == [str(tmp_path / "b")] and rep["profile_differences"] == []
    rows = {r["stage"]: r["suites"]["core"] for r in rep["stages"]}
    assert list(rows) == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    assert rows["RSR-1"]["success"] == pytest.approx(0.6) and rows["RSR-1"]["success_sd"] == pytest.approx(0.1414, abs=1e-4)
    assert rows["RSR-1"]["runs"] == [0.5, 0.6, 0.8] and rows["RSR-1"]["seeds"] == 2
    assert rows["RSR-2"]["seeds"] == 1 and rows["RSR-2"]["success"] == 0.5
    md = (tmp_path / "both" / "report.md").read_text()
    assert "60.0 ± 14.1" in md and "Joined by the seeds of" in md
    lift = next(c for c in rep_claims(rep) if c["claim"].startswith("Self-rewrite lifts the actor (RSR-1"))
    assert "spread 30.0" in lift["figures"]  # 0.5 at Base against RSR-1's runs 0.5, 0.6 and 0.8
    assert not (tmp_path / "a" / "report.json").exists()  # --out: the runs' own reports are untouched

    with pytest.raises(ValueError, match=r"b/run.json: seeds \[1\] are already"):
        build(tmp_path / "b", [tmp_path / "b"])
    start(tmp_path / "c", "smoke", seeds=(2,), log=lambda *_: None)
    with pytest.raises(ValueError, match=r"c/run.json: profile.name 'smoke'"):
        build(tmp_path / "a", [tmp_path / "c"])


def test_seeds_share_base_and_the_report_gives_the_spread(tmp_path, fake_stages):
    calls, _ = fake_stages
    start(tmp_path / "r", "tiny", seeds=(0, 1), log=lambda *_: None)
    assert [c[1] for c in calls].count("eval-base") == 1 and [c[1] for c in calls].count("eval-floor") == 1
    assert (tmp_path / "r" / "seed-0" / "DONE").is_file() and (tmp_path / "r" / "seed-1" / "DONE").is_file()
    seeds = {c[4].seed for c in calls if c[0] == "rpr"}
    assert seeds == {0, 1}
    rep = write_report(tmp_path / "r")
    core = rep["stages"][1]["suites"]["core"]
    assert core["seeds"] == 2 and core["success_sd"] == 0.0
    assert "± 0.0" in (tmp_path / "r" / "report.md").read_text()


def test_report_json_has_the_documented_shape(tmp_path, fake_stages):
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    rep = write_report(tmp_path / "r")
    on_disk = json.loads((tmp_path / "r" / "report.json").read_text())
    assert on_disk["stages"][0]["stage"] == "Base" and [s["stage"] for s in on_disk["stages"]] == \
        ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    core = on_disk["stages"][0]["suites"]["core"]
    assert set(core) >= {"success", "k", "n_tasks", "strict", "process_reward"} and 0 <= core["success"] <= 1
    assert {"controls", "cost", "gains", "funnel", "reference"} <= set(on_disk)
    assert on_disk["funnel"]["0"]["RSR-2"]["discovery_successes"] == 2
    assert on_disk["cost"]["RSR-1"]["paused_s"] == 0.0 and on_disk["cost"]["RSR-1"]["wall_s"] >= 0  # not stopped
    assert rep["gains"]["cycle_one"] == pytest.approx(0.0)
    html = (tmp_path / "r" / "report.html").read_text()
    assert "plotly" in html and "Stage table" in html


def _row(stage, core, runs):
    return {"stage": stage, "suites": {"core": {"success": core, "runs": runs}}}


def test_claims_call_a_gain_inside_the_run_to_run_spread_no_gain():
    from rsi_lite.report.write import claims

    rep = {"stages": [_row("Base", 0.0, [0.0, 0.0, 0.0]), _row("RSR-1", 0.30, [0.28, 0.31, 0.31]),
                      _row("RPR-1", 0.33, [0.24, 0.38, 0.37])],
           "controls": {"Direct PPO": _row("Direct PPO", 0.01, [0.0, 0.0, 0.03])}, "gains": {},
           "reward_shares": {"0": {"rpr-1": {"episodes": 10, "fdr": 0.5, "spr": 0.3}}}}
    got = {}
    for c in claims(rep):  # the first of each (RSR-2's row, not measured here, comes second)
        got.setdefault(c["claim"].split(" (")[0], c)
    assert got["Self-rewrite lifts the actor"]["verdict"] == "holds"
    ppo = got["PPO after self-rewrite moves the actor"]
    assert ppo["verdict"].startswith("not shown (inside") and "+3.0 points (spread 14.0)" == ppo["figures"]
    assert got["Direct PPO from Base stays near Base"]["verdict"] == "holds"
    assert got["SPR cuts failures' share of the reward"]["verdict"] == "holds"
    assert got["TB-GAE equals plain GAE at gamma = lambda = 1"]["verdict"] == "holds"
    rep["room"] = {0: {"RPR-1": {"core": {"episodes": 135, "failures": 90, "on_kinds_ppo_solved": 1,
                                          "at_most_points": 100 / 135}}}}
    ppo = next(c for c in claims(rep) if c["claim"].startswith("PPO after self-rewrite"))
    assert ppo["figures"].endswith("room: RSR-1's failed core episodes on kinds some PPO rollout solved, 1 of 90, "
                                   "so RPR-1 could add at most +0.7")
    cycle_two = [c for c in claims(rep) if "RPR-2" in c["claim"] or "RSR-2" in c["claim"]]
    assert len(cycle_two) == 5 and all(c["verdict"] == "not measured in this run" for c in cycle_two)


def test_cycle_two_claims_judge_the_inherited_critic_and_the_controls_against_rpr_2():
    from rsi_lite.report.write import CURVE_KEYS, claims

    def curve(ev):
        return {**{k: [None] * len(ev) for k in CURVE_KEYS}, "losses/explained_variance_before": ev}

    rep = {"stages": [_row("RSR-1", 0.30, [0.30] * 3), _row("RPR-1", 0.31, [0.30, 0.31, 0.32]),
                      _row("RSR-2", 0.36, [0.35, 0.36, 0.37]), _row("RPR-2", 0.45, [0.44, 0.45, 0.46])],
           "controls": {"RPR-2, critic reset": _row("RPR-2, critic reset", 0.37, [0.36, 0.37, 0.38]),
                        "RPR-2, FDR": _row("RPR-2, FDR", 0.43, [0.40, 0.43, 0.46])},
           "selection": {0: {"RSR-2": {"retained": "RSR-2"}}}, "gains": {},
           "curves": {0: {"rpr-2": curve([0.2, float("nan"), 0.4, 0.3]), "rpr-2-critic-reset": curve([-1.5, -20.5, 0.1])}},
           "room": {0: {"RPR-2": {"core": {"failures": 87, "on_kinds_ppo_solved": 6, "at_most_points": 4.4}}}}}
    got = {c["claim"]: c for c in claims(rep)}
    ppo = got["PPO after self-rewrite moves the actor (RPR-2 over RSR-2, core)"]
    assert ppo["verdict"] == "holds" and ppo["figures"].startswith("+9.0 points (spread 2.0); room: RSR-2's")
    critic = next(c for k, c in got.items() if k.startswith("The inherited critic keeps"))
    assert critic["verdict"] == "holds" and critic["figures"] == "first step 0.20, range 0.20 .. 0.40 over 3 updates"
    vs_reset = next(c for k, c in got.items() if k.startswith("An inherited critic does better"))
    assert vs_reset["verdict"] == "holds" and vs_reset["figures"] == (
        "+8.0 points (spread 2.0); explained variance at the first step 0.20 inherited vs -1.50 reset, "
        "median 0.30 vs -1.50")
    spr = next(c for k, c in got.items() if k.startswith("Refinement on SPR"))
    assert spr["verdict"].startswith("not shown (inside") and spr["figures"] == "+2.0 points (spread 6.0)"
    yield_claim = "Cycle one's gain raises cycle two's discovery yield (the paper leaves it open)"
    assert got[yield_claim]["verdict"] == "not measured in this run"
    f1 = {"discovery_episodes": 312, "discovery_successes": 136, "tasks_solved": 55, "pool_tasks": 78}
    rep["funnel"] = {0: {"RSR-1": f1, "RSR-2": {**f1, "discovery_successes": 221, "tasks_solved": 66}}}
    got = {c["claim"]: c for c in claims(rep)}
    assert got[yield_claim]["verdict"] == "holds" and got[yield_claim]["figures"] == (
        "136/312 -> 221/312 helped discovery episodes solved (+27.2 points, standard error 3.8); pool tasks solved "
        "55 -> 66 of 78")
    rep["funnel"][0]["RSR-2"]["discovery_successes"] = 145  # +2.9 points: inside two standard errors (8.0)
    assert next(c for c in claims(rep) if c["claim"] == yield_claim)["verdict"].startswith("not shown (within")


def test_report_has_the_claims_and_the_ppo_steps(tmp_path, fake_stages):
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    probe = tmp_path / "r" / "rpr-1" / "probe-000"
    probe.mkdir()
    (probe / "metrics.json").write_text(json.dumps({"before_step": 0, "episodes": 4, "pool_success": 0.25,
                                                    "tasks": 2, "tasks_solved": 1, "tasks_learnable": 1,
                                                    "by_task": {"a": [1, 2], "b": [0, 2]}}))
    (probe / "DONE").write_text("")
    write_report(tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    assert "The paper's claims" in md and "PPO per step: rpr-1" in md
    assert "| 0 | 4 | 0.250 | 1 | 1 |" in md  # the probe's row
    assert "| *doing nothing (no command)* | 0.0 | 0.0 | 0.0 | 0.0 | - | 0.0 | 0.091 | 0/1 | 0.0 |" in md
    assert "Below the floor" not in md  # every stage's 0.4 is above every floor figure here


def test_the_table_names_the_stages_below_the_floor(tmp_path, fake_stages):
    """A stage whose process reward falls under the do-nothing floor breaks checks an untouched workspace
    passes; the table says which stage, on which suite, by how much. Within 0.01 of the floor is not reported."""
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    fl = tmp_path / "r" / "eval-floor" / "floor.json"
    doc = json.loads(fl.read_text())
    doc["suites"]["swr"]["process_reward"] = 0.405  # every stage reads 0.4: inside the margin
    fl.write_text(json.dumps(doc))
    res = tmp_path / "r" / "eval-rpr-1" / "results.json"
    doc = json.loads(res.read_text())
    doc["suites"]["swr"]["process_reward"] = 0.3
    res.write_text(json.dumps(doc))
    rep = write_report(tmp_path / "r")
    assert [(st, s) for st, s, *_ in below_floor(rep)] == [("RPR-1", "swr")]
    assert "Below the floor (a process reward at least 0.01 under it): RPR-1 on swr 0.300 (floor 0.405)." in \
        (tmp_path / "r" / "report.md").read_text()


def test_stage_table_names_each_suites_runs_when_they_differ():
    def row(stage, k_core):
        return {"stage": stage, "suites": {s: {"success": 0.2, "k": k_core if s == "core" else 1, "n_tasks": n,
                                               "strict": 1, "episodes": n, "process_reward": 0.3}
                                           for s, n in (("core", 15), ("val", 9), ("swr", 1))}}

    mixed = stage_table({"stages": [row("Base", 3), row("RSR-1", 3)], "controls": {}, "seeds": [0]})
    assert "core (15, k=3)" in mixed and "val (9, k=1)" in mixed and "swr (1, k=1)" in mixed
    same = stage_table({"stages": [row("Base", 1)], "controls": {}, "seeds": [0]})
    assert "Mean@1 (k=1)" in same and "core (15) |" in same and "| val |" in same


def test_the_room_for_refinement_counts_the_failures_on_kinds_some_ppo_rollout_solved(tmp_path):
    from dataclasses import replace

    from rsi_lite.paths import TASKS_ROOT
    from rsi_lite.report.heldout import refinement_room
    from rsi_lite.rollout.trajectory import write_trajectories
    from rsi_lite.tasks import find_tasks
    from rsi_lite.tasks.spec import task_kind
    from rsi_lite.tasks.suites import write_pool

    from ..rpr.test_stage import fake_trajectories

    run = tmp_path / "r"
    write_pool(run / "pool", 40)
    pool = find_tasks(run / "pool")
    core = find_tasks(TASKS_ROOT / "core")
    kind = {t.name: task_kind(t.family, t.difficulty, t.instruction) for t in pool + core}
    shared = next(t for t in pool if any(kind[c.name] == kind[t.name] for c in core))
    on_it = next(c for c in core if kind[c.name] == kind[shared.name])
    other = next(c for c in core if kind[c.name] not in {kind[t.name] for t in pool})
    (run / "rpr-1" / "step-000").mkdir(parents=True)
    (run / "rpr-1" / "config.json").write_text(json.dumps({"pool": str(run / "pool")}))
    solved, failed = fake_trajectories(2)  # the first succeeds, the second fails
    write_trajectories([replace(solved, task=shared.name), replace(failed, task=pool[-1].name)],
                       run / "rpr-1" / "step-000" / "trajectories.jsonl")
    (run / "eval-rsr-1").mkdir()
    (run / "eval-rsr-1" / "DONE").write_text("")
    fails = [replace(failed, task=c.name, suite="core") for c in (on_it, on_it, other)]
    write_trajectories(fails + [replace(solved, task=other.name, suite="core")], run / "eval-rsr-1" / "trajectories.jsonl")
    room = refinement_room(run, run, {"RSR-1": {"retained": "RSR-1"}})
    assert room["RPR-1"]["core"] == {"episodes": 4, "failures": 3, "on_kinds_ppo_solved": 2, "at_most_points": 50.0}
    assert room["RPR-1"]["incoming"] == "RSR-1" and "val" not in room["RPR-1"] and "RPR-2" not in room
    # once RPR-1's own evaluation is done: its change on core over the same tasks, paired by task
    (run / "eval-rpr-1").mkdir()
    (run / "eval-rpr-1" / "DONE").write_text("")
    write_trajectories([replace(solved, task=c.name, suite="core") for c in (on_it, on_it, other, other)],
                       run / "eval-rpr-1" / "trajectories.jsonl")
    paired = refinement_room(run, run, {"RSR-1": {"retained": "RSR-1"}})["RPR-1"]["core"]["paired"]
    # before: on_it 0/2, other 1/2; after: both 2/2 -> +75 points over 2 tasks
    assert paired["tasks"] == 2 and paired["delta"] == pytest.approx(0.75) and paired["before"] == pytest.approx(0.25)


def test_ppo_claim_on_core_is_judged_by_the_paired_interval_when_the_run_has_it():
    from rsi_lite.report.write import claims

    rep = {"stages": [_row("Base", 0.0, [0.0, 0.0, 0.0]), _row("RSR-1", 0.30, [0.30, 0.30, 0.30]),
                      _row("RPR-1", 0.20, [0.20, 0.20, 0.20])], "controls": {}, "gains": {}, "reward_shares": {}}
    pair = {"delta": -0.10, "low": -0.18, "high": -0.03, "tasks": 45, "before": 0.3, "after": 0.2}
    rep["room"] = {0: {"RPR-1": {"core": {"episodes": 135, "failures": 90, "on_kinds_ppo_solved": 1,
                                          "at_most_points": 0.7, "paired": pair},
                                 "val": {"paired": {**pair, "low": -0.2, "high": 0.1, "tasks": 27}}}}}
    ppo = next(c for c in claims(rep) if c["claim"].startswith("PPO after self-rewrite"))
    # the spread of identical runs is 0, so the spread rule would call -10 "not shown"; the interval says a fall
    assert ppo["verdict"] == "refuted here (a fall beyond the 95% interval)"
    assert ppo["figures"].startswith("-10.0 points, 95% interval [-18.0, -3.0] over 45 tasks (paired bootstrap), "
                                     "spread 0.0; val -10.0 points, 95% interval [-20.0, +10.0] over 27 tasks")
