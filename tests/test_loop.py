"""The five-phase loop and its report: `pytest tests/test_loop.py -s`.

The wiring tests replace the three stage functions by recorders that write the files a stage
writes (the stages have their own end-to-end tests), so they check in a second what the loop
decides: where each stage starts, which critic it inherits, which checkpoint is retained on
val, what the controls run, how seeds share Base. The last test runs the real loop (smoke profile)
on a small random model, kills it between two PPO steps, and resumes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsi_lite import loop
from rsi_lite.loop import Profile, profile, start
from rsi_lite.report import build, stage_table, write_report
from rsi_lite.report_claims import claims as rep_claims


def _doc(checkpoint: str, val: float, suites=("core", "hard", "multi", "extreme", "swr", "lhtb", "val")) -> dict:
    return {"checkpoint": checkpoint, "k": 1, "suites": {
        s: {"success": val if s == "val" else 0.5, "k": 1, "n_tasks": 2, "strict": 1, "episodes": 2,
            "process_reward": 0.4, "runs": [0.5]} for s in suites}}


@pytest.fixture
def fake_stages(monkeypatch):
    """Stage functions that record their configs and write the files the real ones write."""
    calls = []
    val_of = {}  # checkpoint substring -> val success

    def fake_rsr(run, cycle, cfg, progress=False):
        d = Path(run) / f"rsr-{cycle}"
        if (d / "DONE").is_file():  # the stages' own contract: a finished stage is not run again
            return
        (d / "checkpoint").mkdir(parents=True, exist_ok=True)
        (d / "funnel.json").write_text(json.dumps({"discovery_successes": cycle, "examples": 3}))
        (d / "DONE").write_text("")
        calls.append(("rsr", cycle, cfg.init, None, cfg))

    def fake_rpr(run, cycle, cfg, progress=False, name=None):
        d = Path(run) / name
        if (d / "DONE").is_file():
            return
        for part in ("actor", "critic"):
            (d / part).mkdir(parents=True, exist_ok=True)
        (d / "metrics.jsonl").write_text(json.dumps({"phase": "joint", "losses/explained_variance_before": 0.1,
                                                     "reward/mean": 0.3, "success/mean": 0.0}) + "\n")
        (d / "DONE").write_text("")
        calls.append(("rpr", name, cfg.init, cfg.critic_from, cfg))

    def fake_eval(d, checkpoint, cfg, model, progress=False):
        if (d / "DONE").is_file():
            return
        d.mkdir(parents=True, exist_ok=True)
        v = next((x for key, x in val_of.items() if key in checkpoint), 0.0)
        (d / "results.json").write_text(json.dumps(_doc(checkpoint, v)))
        (d / "DONE").write_text("")
        calls.append(("eval", d.name, checkpoint, None, None))

    monkeypatch.setattr(loop, "run_rsr", fake_rsr)
    monkeypatch.setattr(loop, "run_rpr", fake_rpr)
    monkeypatch.setattr(loop, "run_eval", fake_eval)
    def fake_floor(d, cfg):  # what `evaluate.floor` writes: lhtb keeps 1 of 11 checks untouched
        if not (d / "DONE").is_file():
            d.mkdir(parents=True, exist_ok=True)
            suites = {s: {"n_tasks": 1, "strict": 0, "success": 0.0, "process_reward": 0.0} for s in cfg.suites}
            suites["lhtb"]["process_reward"] = 1 / 11
            (d / "floor.json").write_text(json.dumps({"suites": suites}))
            (d / "DONE").write_text("")
            calls.append(("floor", d.name, None, None, None))

    monkeypatch.setattr(loop, "run_floor", fake_floor)
    monkeypatch.setattr("rsi_lite.tasks.suites.write_pool", lambda dest, n: Path(dest).mkdir(parents=True))
    return calls, val_of


def test_phases_run_in_order_and_rpr2_inherits_the_critic(tmp_path, fake_stages):
    calls, val_of = fake_stages
    val_of.update({"rsr-1": 0.2, "rpr-1": 0.3, "rsr-2": 0.4, "rpr-2": 0.5})  # every stage improves val
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    order = [(c[0], c[1]) for c in calls]
    assert order == [("eval", "eval-base"), ("floor", "eval-floor"), ("rsr", 1), ("eval", "eval-rsr-1"), ("rpr", "rpr-1"),
                     ("eval", "eval-rpr-1"), ("rsr", 2), ("eval", "eval-rsr-2"), ("rpr", "rpr-2"),
                     ("eval", "eval-rpr-2")]
    rpr1, rpr2 = [c for c in calls if c[0] == "rpr"]
    assert rpr1[2].endswith("rsr-1/checkpoint") and rpr1[3] == ""
    assert rpr2[2].endswith("rsr-2/checkpoint") and rpr2[3].endswith("rpr-1/critic")
    assert rpr2[4].actor_lr == pytest.approx(rpr1[4].actor_lr / 5) and rpr2[4].reward == "spr"
    rsr2 = [c for c in calls if c[0] == "rsr"][1]
    assert rsr2[2].endswith("rpr-1/actor")
    sel = json.loads((tmp_path / "r" / "selection.json").read_text())
    assert [v["retained"] for v in sel.values()] == ["RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    assert json.loads((tmp_path / "r" / "result.json").read_text())["retained"] == "RPR-2"


def test_a_worse_checkpoint_on_val_is_not_carried_forward(tmp_path, fake_stages):
    calls, val_of = fake_stages
    val_of.update({"base": 0.3, "rsr-1": 0.1, "rpr-1": 0.4})  # RSR-1 is worse than Base on val
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    rpr1 = next(c for c in calls if c[0] == "rpr")
    assert rpr1[2] == "base"  # RPR-1 starts from the retained Base, not from RSR-1
    sel = json.loads((tmp_path / "r" / "selection.json").read_text())
    assert sel["RSR-1"]["retained"] == "Base" and "Base is better" in sel["RSR-1"]["why"]
    assert sel["RSR-1"]["candidates"]["RSR-1"]["val_success"] == 0.1


def test_controls_start_where_their_counterparts_start(tmp_path, fake_stages):
    calls, _ = fake_stages
    start(tmp_path / "r", "tiny", controls=("direct-ppo", "critic-reset", "reward-fdr"), log=lambda *_: None)
    rpr = {c[1]: c for c in calls if c[0] == "rpr"}
    p = profile("tiny")
    assert rpr["control-direct-ppo"][2] == "base" and rpr["control-direct-ppo"][3] == ""
    assert rpr["control-direct-ppo"][4].steps == 2 * p.rpr.steps  # as many PPO steps as RPR-1 + RPR-2
    assert rpr["rpr-2-critic-reset"][2] == rpr["rpr-2"][2] and rpr["rpr-2-critic-reset"][3] == ""
    assert rpr["rpr-2-fdr"][4].reward == "fdr" and rpr["rpr-2-fdr"][3] == rpr["rpr-2"][3]
    rep = build(tmp_path / "r")
    assert list(rep["controls"]) == ["Direct PPO", "RPR-2, critic reset", "RPR-2, FDR"]
    assert "Direct PPO" in stage_table(rep)



def test_a_control_named_on_resume_runs_only_that_branch(tmp_path, fake_stages):
    calls, _ = fake_stages
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    main_calls = len(calls)
    start(tmp_path / "r", "tiny", resume=True, controls=("critic-reset",), log=lambda *_: None)
    assert [(c[0], c[1]) for c in calls[main_calls:]] == [("rpr", "rpr-2-critic-reset"),
                                                          ("eval", "eval-rpr-2-critic-reset")]
    assert json.loads((tmp_path / "r" / "run.json").read_text())["controls"] == ["critic-reset"]
    start(tmp_path / "r", "tiny", resume=True, log=lambda *_: None)  # resuming without the flag keeps it
    assert len(calls) == main_calls + 2
    assert list(build(tmp_path / "r")["controls"]) == ["RPR-2, critic reset"]


def test_one_cycle_stops_after_rpr_1_and_a_resume_keeps_it(tmp_path, fake_stages):
    """`--cycles 1` (a second training seed of cycle one): Base, RSR-1, RPR-1 and their evaluations, nothing of
    cycle two, and the controls that branch from RPR-2's start are refused; `--resume --cycles 2` then runs
    cycle two alone, from cycle one's selection, and a two-cycle run is never cut back to one."""
    calls, _ = fake_stages
    logged = []
    start(tmp_path / "r", "tiny", seeds=(1,), cycles=1, controls=("direct-ppo",), log=lambda *_: None)
    assert [c[1] for c in calls if c[0] == "rsr"] == [1]
    dirs = [c[1] for c in calls if c[0] != "rsr"]
    assert {"rpr-1", "eval-rsr-1", "eval-rpr-1", "control-direct-ppo"} <= set(dirs)
    assert not [d for d in dirs if "2" in d]
    assert json.loads((tmp_path / "r" / "run.json").read_text())["cycles"] == 1
    assert {c[4].seed for c in calls if c[0] == "rpr"} == {1}
    rep = write_report(tmp_path / "r")
    assert [s["stage"] for s in rep["stages"] if s.get("suites")] == ["Base", "RSR-1", "RPR-1"]
    with pytest.raises(ValueError, match="critic-reset"):
        start(tmp_path / "r", "tiny", resume=True, controls=("critic-reset",), log=lambda *_: None)
    with pytest.raises(ValueError, match="--cycles: cycles 1.*reward-fdr"):
        start(tmp_path / "s", "tiny", cycles=1, controls=("reward-fdr",), log=lambda *_: None)
    assert not (tmp_path / "s").exists()
    n = len(calls)
    start(tmp_path / "r", "tiny", resume=True, cycles=2, controls=("critic-reset",), log=logged.append)
    new = calls[n:]
    assert [c[1] for c in new if c[0] == "rsr"] == [2] and "extending" in " ".join(logged)
    assert not [c for c in new if c[0] != "rsr" and "1" in c[1]]  # nothing of cycle one (nor Base) again
    assert {"rpr-2", "eval-rpr-2", "rpr-2-critic-reset"} <= {c[1] for c in new}
    assert json.loads((tmp_path / "r" / "run.json").read_text())["cycles"] == 2
    n = len(calls)
    m = len(logged)
    start(tmp_path / "r", "tiny", resume=True, cycles=1, log=logged.append)
    assert len(calls) == n and "--cycles 1 ignored" in " ".join(logged[m:])
    rep = write_report(tmp_path / "r")
    assert [s["stage"] for s in rep["stages"] if s.get("suites")][:5] == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]


def test_a_second_seeds_run_joins_the_report_with_its_spread(tmp_path, fake_stages):
    """`rsi-lite report RUN OTHER --out DIR`: a one-cycle run of seed 1 joins a five-phase run of seed 0. Rows
    both ran get the mean and sd over the seeds, and the claims' spread spans both seeds' runs; rows only one ran
    keep that seed's figures; a repeated seed or another profile is refused, naming the file."""
    from rsi_lite.cli import main as cli

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


def test_refuses_to_mix_runs(tmp_path, fake_stages):
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    with pytest.raises(FileExistsError, match="--resume"):
        start(tmp_path / "r", "tiny", log=lambda *_: None)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a run"):
        start(tmp_path / "other", "tiny", log=lambda *_: None)
    with pytest.raises(ValueError, match="controls"):
        start(tmp_path / "new", "tiny", controls=("critic-rest",), log=lambda *_: None)


def test_profiles_round_trip_and_gpu_says_what_is_missing(monkeypatch):
    for name in ("tiny", "cpu", "smoke"):
        p = profile(name)
        assert Profile.from_dict(json.loads(json.dumps(p.to_dict()))) == p
        assert "val" in p.eval.suites
    monkeypatch.setenv("RSI_LITE_GPU_MODEL", "/nonexistent")
    with pytest.raises(RuntimeError, match="CUDA|RSI_LITE_GPU_MODEL"):
        loop.check_gpu_profile(profile("gpu"))


# ---------------------------------------------------------------- the real loop, killed and resumed

SCRIPT = """
import sys
from rsi_lite.loop import profile, start
p = profile("smoke")
p.model = sys.argv[2]
p.eval.suites = ["core", "val"]
start(sys.argv[1], "smoke", resume=len(sys.argv) > 3, p=p, controls=("critic-reset",),
      log=lambda m: print(m, flush=True))
"""


def test_killed_mid_stage_and_resumed(tmp_path, bwrap_ok, small_random_model):
    """The real loop on a small random model, killed between two PPO steps of RPR-1 and resumed: finished
    stages and steps are not redone, and every stage, the control and the report complete."""
    out = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, "-c", SCRIPT, str(out), str(small_random_model)]
    proc = subprocess.Popen(args, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    marker = out / "rpr-1" / "step-000" / "DONE"
    deadline = time.monotonic() + 900
    while not marker.is_file() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.is_file(), proc.stdout.read().decode()[-3000:] if proc.poll() is not None else "timed out"
    os.killpg(proc.pid, signal.SIGKILL)  # in the middle of RPR-1: its first step written, the rest not
    proc.wait()
    assert (out / "rsr-1" / "DONE").is_file() and not (out / "rpr-1" / "DONE").is_file()
    assert not (out / "DONE").is_file()
    done_before = [out / "eval-base" / "results.json", out / "rsr-1" / "funnel.json",
                   out / "rpr-1" / "step-000" / "metrics.json"]
    stamps = {p: p.stat().st_mtime_ns for p in done_before}
    # a kill leaves no half-written file where a reader looks (temp files may remain; nothing reads them)
    for f in out.rglob("*.json*"):
        if f.suffix == ".jsonl":
            [json.loads(line) for line in f.read_text().splitlines()]
        elif f.suffix == ".json":
            json.loads(f.read_text())

    done = subprocess.run(args + ["resume"], env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # finished work was not redone
    for stage in ("rsr-1", "rpr-1", "rsr-2", "rpr-2", "eval-rpr-2", "rpr-2-critic-reset", "eval-rpr-2-critic-reset"):
        assert (out / stage / "DONE").is_file()
    assert (out / "DONE").is_file()
    summary = json.loads((out / "rpr-1" / "summary.json").read_text())
    assert summary["phases"] == {"warmup": 1, "calibration": 1, "joint": 1}  # step 0 kept, steps 1-2 run
    cost = json.loads((out / "cost.json").read_text())
    assert "resumed" in cost["RPR-1"].get("note", "") and "note" not in cost["RSR-1"]
    assert cost["RPR-2"]["generated_tokens"] > 0
    b = cost["RSR-2"]["breakdown"]  # where a stage's wall went
    assert b["rollout/generating"] > 0 and b["model/load"] > 0
    assert sum(b.get(k, 0) for k in ("model/load", "model/serve", "rollout/generating", "rollout/waiting",
                                     "train/sft", "other")) == pytest.approx(cost["RSR-2"]["wall_s"], abs=0.5)
    assert cost["RPR-2"]["breakdown"]["train/ppo"] > 0
    rep = write_report(out)
    assert "Where the wall went" in (out / "report.md").read_text()
    assert [s["stage"] for s in rep["stages"]] == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    assert list(rep["controls"]) == ["RPR-2, critic reset"]
    assert set(rep["selection"][0]) == {"RSR-1", "RPR-1", "RSR-2", "RPR-2"}


def _row(stage, core, runs):
    return {"stage": stage, "suites": {"core": {"success": core, "runs": runs}}}


def test_claims_call_a_gain_inside_the_run_to_run_spread_no_gain():
    from rsi_lite.report import claims

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
    from rsi_lite.report import CURVE_KEYS, claims

    def curve(ev):
        return {**{k: [None] * len(ev) for k in CURVE_KEYS}, "losses/explained_variance_before": ev}

    rep = {"stages": [_row("RSR-1", 0.30, [0.30] * 3), _row("RPR-1", 0.31, [0.30, 0.31, 0.32]),
                      _row("RSR-2", 0.36, [0.35, 0.36, 0.37]), _row("RPR-2", 0.45, [0.44, 0.45, 0.46])],
           "controls": {"RPR-2, critic reset": _row("RPR-2, critic reset", 0.37, [0.36, 0.37, 0.38]),
                        "RPR-2, FDR": _row("RPR-2, FDR", 0.43, [0.40, 0.43, 0.46])},
           "selection": {0: {"RSR-2": {"retained": "RSR-2"}}}, "gains": {},
           "curves": {0: {"rpr-2": curve([0.2, float("nan"), 0.4, 0.3]), "rpr-2-critic-reset": curve([-1.5, 0.1])}},
           "room": {0: {"RPR-2": {"core": {"failures": 87, "on_kinds_ppo_solved": 6, "at_most_points": 4.4}}}}}
    got = {c["claim"]: c for c in claims(rep)}
    ppo = got["PPO after self-rewrite moves the actor (RPR-2 over RSR-2, core)"]
    assert ppo["verdict"] == "holds" and ppo["figures"].startswith("+9.0 points (spread 2.0); room: RSR-2's")
    critic = next(c for k, c in got.items() if k.startswith("The inherited critic keeps"))
    assert critic["verdict"] == "holds" and critic["figures"] == "first step 0.20, range 0.20 .. 0.40 over 3 updates"
    vs_reset = next(c for k, c in got.items() if k.startswith("An inherited critic does better"))
    assert vs_reset["verdict"] == "holds" and vs_reset["figures"] == (
        "+8.0 points (spread 2.0); explained variance at the first step 0.20 inherited vs -1.50 reset, "
        "mean 0.30 vs -0.70")
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


def test_stage_table_names_each_suites_runs_when_they_differ():
    def row(stage, k_core):
        return {"stage": stage, "suites": {s: {"success": 0.2, "k": k_core if s == "core" else 1, "n_tasks": n,
                                               "strict": 1, "episodes": n, "process_reward": 0.3}
                                           for s, n in (("core", 15), ("val", 9), ("swr", 1))}}

    mixed = stage_table({"stages": [row("Base", 3), row("RSR-1", 3)], "controls": {}, "seeds": [0]})
    assert "core (15, k=3)" in mixed and "val (9, k=1)" in mixed and "swr (1, k=1)" in mixed
    same = stage_table({"stages": [row("Base", 1)], "controls": {}, "seeds": [0]})
    assert "Mean@1 (k=1)" in same and "core (15) |" in same and "| val |" in same


def test_each_rpr_phase_is_measured_on_held_out_instances_of_its_learnable_kinds(tmp_path, fake_stages, monkeypatch):
    from rsi_lite.trajectory import Trajectory, write_trajectories

    calls, val_of = fake_stages
    val_of.update({"rsr-1": 0.2, "rpr-1": 0.3, "rsr-2": 0.4, "rpr-2": 0.5})
    copy = "file_ops/easy: Copy the file X to"

    def fake_write_heldout(stage, out, per_kind):  # RPR-1's first probe found one kind learnable, RPR-2's none
        if stage.name == "rpr-2":
            return {}
        out.mkdir(parents=True)
        return {f"heldout-{i}": copy for i in range(per_kind)}

    def traj(task, seed, strict):
        return Trajectory(task=task, task_path="", suite="heldout", family="file_ops", difficulty="easy",
                          harness="plain", action_format="bash", policy="p", seed=seed, system="", messages=[],
                          token_ids=[1], action_mask=[1], logprobs=[0.0], turn_spans=[[0, 1]], finish_reason="complete",
                          turns=1, verifier={"strict": strict, "passed": strict, "total": 1, "valid": True},
                          rewards={}, tokens={"prompt": 1, "generated": 1, "total": 2}, timings={})

    fake_eval = loop.run_eval

    def eval_or_heldout(d, checkpoint, cfg, model, progress=False):
        if "heldout" not in str(d):
            return fake_eval(d, checkpoint, cfg, model, progress)
        d.mkdir(parents=True)
        solved = int(checkpoint.endswith("rpr-1/actor"))  # RSR-1 solves none of them, RPR-1 all of them
        trajs = [traj(f"heldout-{i}", s, solved) for s in range(cfg.k) for i in range(2)]
        write_trajectories(trajs, d / "trajectories.jsonl")
        from rsi_lite.evaluate import summarize

        (d / "results.json").write_text(json.dumps({"checkpoint": checkpoint, "k": cfg.k,
                                                    "suites": summarize(trajs, cfg.k)}))
        (d / "DONE").write_text("")
        calls.append(("heldout", str(d.relative_to(tmp_path / "r")), checkpoint, cfg.suites, cfg))

    monkeypatch.setattr("rsi_lite.rpr_batches.write_heldout", fake_write_heldout)
    monkeypatch.setattr(loop, "run_eval", eval_or_heldout)
    p = profile("tiny")
    p.eval.heldout_per_kind = 2
    start(tmp_path / "r", "tiny", p=p, log=lambda *_: None)
    held = [c for c in calls if c[0] == "heldout"]
    assert [c[1] for c in held] == ["heldout-rpr-1/eval-rsr-1", "heldout-rpr-1/eval-rpr-1"]  # none for RPR-2
    assert held[0][2].endswith("rsr-1/checkpoint") and held[1][2].endswith("rpr-1/actor")
    assert held[0][3] == [str(tmp_path / "r" / "heldout-rpr-1" / "tasks")] and held[0][4].k == 3  # core's k
    order = [c[1] for c in calls]
    assert order.index("heldout-rpr-1/eval-rpr-1") < order.index("eval-rpr-1")
    rep = build(tmp_path / "r")
    rows = rep["heldout"][0]["RPR-1"]["rows"]
    assert [(r["stage"], r["success"], r["by_kind"]) for r in rows] == [("RSR-1", 0.0, {copy: [0, 6]}),
                                                                       ("RPR-1", 1.0, {copy: [6, 6]})]
    write_report(tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## RPR-1 on held-out kinds" in md and "| RPR-1 | 100.00 (6/6) | 100.0, 100.0, 100.0 | 6/6 |" in md
    assert "| PPO learns where it has something to learn (RPR-1 over RSR-1 on 2 held-out instances" in md
    assert "+100.0 points (spread 0.0)" in md and "heldout RPR-1: RSR-1" in json.loads((tmp_path / "r" / "cost.json").read_text())


def test_the_room_for_refinement_counts_the_failures_on_kinds_some_ppo_rollout_solved(tmp_path):
    from dataclasses import replace

    from rsi_lite.frontier import task_kind
    from rsi_lite.paths import TASKS_ROOT
    from rsi_lite.report_heldout import refinement_room
    from rsi_lite.tasks import find_tasks
    from rsi_lite.tasks.suites import write_pool
    from rsi_lite.trajectory import write_trajectories

    from .test_rpr import fake_trajectories

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
