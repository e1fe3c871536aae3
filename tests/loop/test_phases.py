"""The five-phase loop: `pytest tests/loop/test_phases.py -s` (its report: tests/report/test_write.py).

The wiring tests replace the stage functions by recorders (`fake_stages`, in conftest.py) that
write the files a stage writes (the stages have their own end-to-end tests), so they check in a
second what the loop decides: where each stage starts, which critic it inherits, which checkpoint
is retained on val, what the controls run, how seeds share Base. One test runs the real loop
(smoke profile) on a small random model, kills it between two PPO steps, and resumes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rsi_lite.loop import phases as loop
from rsi_lite.loop.phases import Profile, profile, start
from rsi_lite.paths import REPO
from rsi_lite.report.write import build, stage_table, write_report
from rsi_lite.rpr.replay import replay_path


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


def test_retained_after_is_the_loops_selection(tmp_path, fake_stages):
    """`loop.retained_after` (notebook 06's exercise reference) gives what the loop recorded in selection.json,
    on a run where the chain matters: RPR-1 falls under RSR-1, RSR-2 rises over RPR-1 but not over RSR-1, and RPR-2
    ties RSR-1 (a tie keeps the new one)."""
    _, val_of = fake_stages
    val_of.update({"base": 0.0, "rsr-1": 0.3, "rpr-1": 0.2, "rsr-2": 0.25, "rpr-2": 0.3})
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    sel = json.loads((tmp_path / "r" / "selection.json").read_text())
    docs = {s: json.loads((loop.eval_dir(tmp_path / "r", s) / "results.json").read_text()) for s in loop.STAGES}
    assert [v["retained"] for v in sel.values()] == loop.retained_after(loop.STAGES, docs) \
        == ["RSR-1", "RSR-1", "RSR-1", "RPR-2"]


def test_selection_is_one_function_on_the_files_and_a_bad_evaluation_is_named(tmp_path):
    """`select_on_val` (the loop's rule, also called by scale_up.cycle): success, then process reward, a tie keeps the
    new checkpoint; the choice is recorded and read back; an evaluation without val figures is an error naming its
    file and the missing field, and a candidate not yet evaluated names the missing DONE."""
    from rsi_lite.loop.phases import eval_dir, select_on_val

    from ..conftest import _doc

    run = tmp_path / "r"

    def evaluated(stage, checkpoint, val, process=0.4):
        d = eval_dir(run, stage)
        d.mkdir(parents=True, exist_ok=True)
        doc = _doc(checkpoint, val)
        doc["suites"]["val"]["process_reward"] = process
        (d / "results.json").write_text(json.dumps(doc))
        (d / "DONE").write_text("")

    evaluated("Base", "base", 0.3)
    evaluated("RSR-1", "rsr-1/checkpoint", 0.3, process=0.5)
    assert select_on_val(run, "RSR-1", ("Base", "base"), ("RSR-1", "rsr-1/checkpoint"), log=lambda *_: None) == \
        ("RSR-1", "rsr-1/checkpoint")  # equal success, better process reward
    evaluated("RPR-1", "rpr-1/actor", 0.2)
    assert select_on_val(run, "RPR-1", ("RSR-1", "rsr-1/checkpoint"), ("RPR-1", "rpr-1/actor"),
                         log=lambda *_: None) == ("RSR-1", "rsr-1/checkpoint")
    sel = json.loads((run / "selection.json").read_text())
    assert list(sel) == ["RSR-1", "RPR-1"] and sel["RPR-1"]["candidates"]["RPR-1"]["val_success"] == 0.2
    evaluated("RPR-1", "rpr-1/actor", 0.9)  # recorded choices are not decided again
    assert select_on_val(run, "RPR-1", ("RSR-1", "x"), ("RPR-1", "y"), log=lambda *_: None)[0] == "RSR-1"

    evaluated("RSR-2", "rsr-2/checkpoint", 0.5)
    bad = json.loads((run / "eval-rsr-2" / "results.json").read_text())
    del bad["suites"]["val"]
    (run / "eval-rsr-2" / "results.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"eval-rsr-2/results.json: suites.val missing"):
        select_on_val(run, "RSR-2", ("RSR-1", "c"), ("RSR-2", "rsr-2/checkpoint"), log=lambda *_: None)
    bad["suites"]["val"] = {"success": "high", "process_reward": 0.1}
    (run / "eval-rsr-2" / "results.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"eval-rsr-2/results.json: suites.val.success is 'high'"):
        select_on_val(run, "RSR-2", ("RSR-1", "c"), ("RSR-2", "rsr-2/checkpoint"), log=lambda *_: None)
    with pytest.raises(FileNotFoundError, match=r"eval-rpr-2/DONE: missing"):
        select_on_val(run, "RPR-2", ("RSR-1", "c"), ("RPR-2", "rpr-2/actor"), log=lambda *_: None)
    assert "RSR-2" not in json.loads((run / "selection.json").read_text())


def test_controls_start_where_their_counterparts_start(tmp_path, fake_stages):
    calls, _ = fake_stages
    start(tmp_path / "r", "tiny", controls=("direct-ppo", "critic-reset", "reward-fdr"), log=lambda *_: None)
    rpr = {c[1]: c for c in calls if c[0] == "rpr"}
    p = profile("tiny")
    assert rpr["control-direct-ppo"][2] == "base" and rpr["control-direct-ppo"][3] == ""
    assert rpr["control-direct-ppo"][4].steps == 2 * p.rpr.steps  # as many PPO steps as RPR-1 + RPR-2
    assert rpr["rpr-2-critic-reset"][2] == rpr["rpr-2"][2] and rpr["rpr-2-critic-reset"][3] == ""
    assert rpr["rpr-2-fdr"][4].reward == "fdr" and rpr["rpr-2-fdr"][3] == rpr["rpr-2"][3]
    # every keyword a control passes arrives: RPR-2's actor learning rate on both RPR-2 branches, RPR-1's on direct PPO
    assert rpr["rpr-2-critic-reset"][4].actor_lr == rpr["rpr-2-fdr"][4].actor_lr == p.rpr2_actor_lr
    assert rpr["control-direct-ppo"][4].actor_lr == rpr["rpr-1"][4].actor_lr
    assert rpr["rpr-2-critic-reset"][4].reward == rpr["rpr-2"][4].reward
    rep = build(tmp_path / "r")
    assert list(rep["controls"]) == ["Direct PPO", "RPR-2, critic reset", "RPR-2, FDR"]
    assert "Direct PPO" in stage_table(rep)


def test_the_committed_direct_ppo_config_is_the_cpu_profiles_branch(tmp_path, fake_stages):
    """configs/rpr-direct-ppo-cpu.json runs the `cpu` profile's direct-PPO control on its own (`rsi-lite rpr --from
    base`, docs/running.md): it must be the config the loop gives that branch, field for field, but for the pool's
    directory (the loop's RUN/pool, the stage's own DIR/pool: the same generated tasks)."""
    from rsi_lite.rpr.config import RPRConfig

    calls, _ = fake_stages
    p = profile("cpu")
    p.eval.heldout_per_kind = 0  # the fake pool holds no task to make held-out instances of
    start(tmp_path / "r", "cpu", p=p, controls=("direct-ppo",), cycles=1, log=lambda *_: None)
    loop_cfg = next(c[4] for c in calls if c[0] == "rpr" and c[1] == "control-direct-ppo").to_dict()
    committed = RPRConfig.from_dict(json.loads((REPO / "configs" / "rpr-direct-ppo-cpu.json").read_text()))
    assert loop_cfg["pool"] == str(tmp_path / "r" / "pool") and loop_cfg["replay"] == 0.0
    assert {**loop_cfg, "pool": ""} == committed.to_dict()



def test_the_replay_term_keeps_the_examples_behind_the_retained_checkpoint(tmp_path, fake_stages):
    """With `RPRConfig.replay` on, each RPR phase replays the self-rewrite examples its incoming checkpoint was
    trained on: RSR-1's from RSR-1; RSR-1's again from RPR-1's actor when RSR-2 was worse on val (not RSR-2's,
    which the loop rejected); none from Base (direct PPO), which then runs without the term."""
    calls, val_of = fake_stages
    val_of.update({"rsr-1": 0.2, "rpr-1": 0.3, "rsr-2": 0.1, "rpr-2": 0.4})
    p = profile("tiny")
    p.rpr.replay, p.rpr.replay_by = 1.0, "kind"
    logged = []
    start(tmp_path / "r", "tiny", controls=("direct-ppo", "critic-reset"), p=p, log=logged.append)
    rpr = {c[1]: c[4] for c in calls if c[0] == "rpr"}
    run = (tmp_path / "r").absolute()
    assert rpr["rpr-1"].replay == 1.0 and rpr["rpr-1"].replay_from == ""        # the default: beside RSR-1's checkpoint
    assert replay_path(rpr["rpr-1"]) == run / "rsr-1" / "dataset.jsonl"
    assert rpr["rpr-2"].init == str(run / "rpr-1" / "actor") and rpr["rpr-2"].replay == 1.0
    assert rpr["rpr-2"].replay_from == str(run / "rsr-1" / "dataset.jsonl") and rpr["rpr-2"].replay_by == "kind"
    assert rpr["rpr-2-critic-reset"].replay_from == rpr["rpr-2"].replay_from
    assert rpr["control-direct-ppo"].init == "base" and rpr["control-direct-ppo"].replay == 0.0
    assert any("[Direct PPO] no self-rewrite behind base: the replay term is off" in x for x in logged), logged
    n = len(calls)  # a resume: rpr-2's replay_from (set, a path) is the same run's, so it is accepted; nothing reruns
    start(tmp_path / "r", "tiny", resume=True, controls=("direct-ppo", "critic-reset"), p=p, log=lambda *_: None)
    assert not [c for c in calls[n:] if c[0] in ("rsr", "rpr")]


def test_the_replay_term_follows_an_accepted_rsr_2_turns_off_behind_base_and_resumes(tmp_path, fake_stages):
    """RSR-2 better on val: RPR-2 replays RSR-2's own examples (the default beside its checkpoint), and a resume is
    the same run. RSR-1 worse than Base: RPR-1 starts from Base without the term, and says so."""
    calls, val_of = fake_stages
    p = profile("tiny")
    p.rpr.replay, p.rpr.replay_by = 1.0, "kind"
    val_of.update({"rsr-1": 0.2, "rpr-1": 0.3, "rsr-2": 0.5, "rpr-2": 0.6})
    start(tmp_path / "a", "tiny", p=p, log=lambda *_: None)
    rpr = {c[1]: c[4] for c in calls if c[0] == "rpr"}
    run = (tmp_path / "a").absolute()
    assert rpr["rpr-2"].init == str(run / "rsr-2" / "checkpoint") and rpr["rpr-2"].replay_from == ""
    assert replay_path(rpr["rpr-2"]) == run / "rsr-2" / "dataset.jsonl"
    start(tmp_path / "a", "tiny", p=p, resume=True, log=lambda *_: None)  # the same run: no error, nothing rerun

    calls.clear()
    val_of.clear()
    val_of.update({"base": 0.5, "rsr-1": 0.1, "rpr-1": 0.1, "rsr-2": 0.1, "rpr-2": 0.1})
    logged = []
    start(tmp_path / "b", "tiny", p=p, cycles=1, log=logged.append)
    rpr = {c[1]: c[4] for c in calls if c[0] == "rpr"}
    assert rpr["rpr-1"].init == "base" and rpr["rpr-1"].replay == 0.0
    assert any("[RPR-1] no self-rewrite behind base: the replay term is off" in x for x in logged), logged


def test_a_control_named_on_resume_runs_only_that_branch(tmp_path, fake_stages, monkeypatch):
    calls, _ = fake_stages
    start(tmp_path / "r", "tiny", log=lambda *_: None)
    main_calls = len(calls)
    assert (tmp_path / "r" / "DONE").is_file()

    def killed(*a, **k):
        raise KeyboardInterrupt

    real_rpr = loop.run_rpr
    monkeypatch.setattr(loop, "run_rpr", killed)  # killed as the new branch starts: the run is not finished
    with pytest.raises(KeyboardInterrupt):
        start(tmp_path / "r", "tiny", resume=True, controls=("critic-reset",), log=lambda *_: None)
    assert not (tmp_path / "r" / "DONE").is_file()
    monkeypatch.setattr(loop, "run_rpr", real_rpr)
    start(tmp_path / "r", "tiny", resume=True, controls=("critic-reset",), log=lambda *_: None)
    assert (tmp_path / "r" / "DONE").is_file()
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
from rsi_lite.loop.phases import profile, start
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
    cpu = cost["RSR-2"]["cpu_s"]  # CPU seconds beside the wall: the process's, its children's, the machine's
    assert cpu["process"] > 0 and cpu["machine"] >= cpu["process"] * 0.9
    # the machine's seconds over the wall (both stored rounded to 0.1 s, hence the tolerance on a short test stage)
    assert cost["RSR-2"]["cpu_share"] == pytest.approx(cpu["machine"] / cost["RSR-2"]["wall_s"], rel=0.1)
    rep = write_report(out)
    assert "Where the wall went" in (out / "report.md").read_text()
    assert "of their wall (200% = both cores" in (out / "report.md").read_text()
    assert [s["stage"] for s in rep["stages"]] == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    assert list(rep["controls"]) == ["RPR-2, critic reset"]
    assert set(rep["selection"][0]) == {"RSR-1", "RPR-1", "RSR-2", "RPR-2"}


def test_each_rpr_phase_is_measured_on_held_out_instances_of_its_learnable_kinds(tmp_path, fake_stages, monkeypatch):
    from rsi_lite.rollout.trajectory import Trajectory, write_trajectories
    from rsi_lite.rpr.batches import heldout_per_kind

    calls, val_of = fake_stages
    val_of.update({"rsr-1": 0.2, "rpr-1": 0.3, "rsr-2": 0.4, "rpr-2": 0.5})
    copy = "file_ops/easy: Copy the file X to"

    def fake_write_heldout(stage, out, per_kind, least, runs):  # RPR-1's first probe found one kind learnable, RPR-2's none
        if stage.name == "rpr-2":
            return {}
        out.mkdir(parents=True)
        assert (least, runs) == (7, 3)  # the profile's floor, core's k
        n = heldout_per_kind(per_kind, least, 1, runs)
        made = {f"heldout-{i}": copy for i in range(n)}
        (out / "kinds.json").write_text(json.dumps({"per_kind": n, "kinds": [copy], "tasks": made}))  # as write_kind_suite
        return made

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
        trajs = [traj(f"heldout-{i}", s, solved) for s in range(cfg.k) for i in range(3)]
        write_trajectories(trajs, d / "trajectories.jsonl")
        from rsi_lite.eval.evaluate import summarize

        (d / "results.json").write_text(json.dumps({"checkpoint": checkpoint, "k": cfg.k,
                                                    "suites": summarize(trajs, cfg.k)}))
        (d / "DONE").write_text("")
        calls.append(("heldout", str(d.relative_to(tmp_path / "r")), checkpoint, cfg.suites, cfg))

    monkeypatch.setattr("rsi_lite.rpr.batches.write_heldout", fake_write_heldout)
    monkeypatch.setattr(loop, "run_eval", eval_or_heldout)
    p = profile("tiny")
    p.eval.heldout_per_kind, p.eval.heldout_min_episodes = 2, 7  # 7 episodes of one kind at k=3: 3 tasks
    start(tmp_path / "r", "tiny", p=p, log=lambda *_: None)
    held = [c for c in calls if c[0] == "heldout"]
    assert [c[1] for c in held] == ["heldout-rpr-1/eval-rsr-1", "heldout-rpr-1/eval-rpr-1"]  # none for RPR-2
    assert held[0][2].endswith("rsr-1/checkpoint") and held[1][2].endswith("rpr-1/actor")
    assert held[0][3] == [str(tmp_path / "r" / "heldout-rpr-1" / "tasks")] and held[0][4].k == 3  # core's k
    order = [c[1] for c in calls]
    assert order.index("heldout-rpr-1/eval-rpr-1") < order.index("eval-rpr-1")
    rep = build(tmp_path / "r")
    rows = rep["heldout"][0]["RPR-1"]["rows"]
    assert [(r["stage"], r["success"], r["by_kind"]) for r in rows] == [("RSR-1", 0.0, {copy: [0, 9]}),
                                                                       ("RPR-1", 1.0, {copy: [9, 9]})]
    write_report(tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## RPR-1 on held-out kinds" in md and "| RPR-1 | 100.00 (9/9) | 100.0, 100.0, 100.0 | 9/9 |" in md
    assert "| PPO learns where it has something to learn (RPR-1 over RSR-1 on 3 held-out instances" in md
    assert "+100.0 points, 95% interval [+100.0, +100.0] (paired bootstrap over 3 tasks)" in md  # every task gained
    assert "## What refinement did in this run" in md
    assert "heldout RPR-1: RSR-1" in json.loads((tmp_path / "r" / "cost.json").read_text())
