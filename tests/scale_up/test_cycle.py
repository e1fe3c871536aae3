"""The cycle driver (`scale_up.cycle`): Base -> RSR-1 -> RPR-1 -> RSR-2 -> RPR-2 as verl jobs in the kit's run
directory, each phase evaluated and selected on val as the CPU loop does.

The jobs that need GPUs or a model are replaced by a stand-in that writes what each writes (verl's checkpoints,
its tracker file and file-logger metrics, the merger's adapter, the trainer's trajectories, the kit's
self-rewrite files, an evaluation's results.json from the kit's own `summarize`); the steps done in the driver's
process run for real: the task rows from a generated pool, the export, the selection (the loop's
`select_on_val`). Checked: the jobs' order and commands (the inherited critic, RPR-2's rate, each phase started
from the checkpoint retained on val), the export and the evaluations read by the kit's own report, DONE/resume
(a run killed inside a job resumes at that job, every finished one skipped), and bad input named by file and
field. One test runs the real `evaluate` and `floor` jobs (the kit's environment, the bundled model, one val
task) and reads them back with the report.

Run (verl's environment; the last test also needs the kit's, .venv or $RSI_LITE_KIT_PYTHON):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_cycle.py
"""

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402

from scale_up.cycle import CycleConfig, plan_jobs, start  # noqa: E402

from .conftest import REPO, kit_env, kit_python  # noqa: E402

STEPS = 6
POOL, WARMUP = 8, 3
SUITES = ("core", "hard", "multi", "extreme", "swr", "lhtb", "val")


def _config(tmp_path, **kw) -> CycleConfig:
    return CycleConfig(run=str(tmp_path / "run"), model="/models/base", steps=STEPS, pool_size=POOL,
                       warmup_tasks=WARMUP, **kw)


def _trajectory(i: int, step: int, suite: str = "pool", ok: bool | None = None, seed: int | None = None):
    from rsi_lite.rollout.trajectory import Trajectory

    ok = (i + step) % 2 == 0 if ok is None else ok
    return Trajectory(task=f"t{i}", task_path="", suite=suite, family="f", difficulty="easy", harness="plain",
                      action_format="json", policy="verl", seed=i if seed is None else seed, system="", messages=[],
                      token_ids=[1, 2, 3], action_mask=[0, 1, 1], logprobs=[0.0, -1.0, -1.0], turn_spans=[[1, 3]],
                      finish_reason="complete", turns=1, verifier={"strict": int(ok), "passed": 1, "total": 2},
                      rewards={"s": float(ok), "fdr": 0.5, "spr": 1.0 if ok else 0.25},
                      tokens={"generated": 2}, timings={})


class StandIn:
    """Writes what each launched job writes instead of running it; `kill_at` ("phase/job") raises there once, as a
    job killed half-way (after writing part of its files) would leave the run. `val` (stage label -> solved val
    tasks of 4) steers the evaluations, so the selection between checkpoints can be checked."""

    def __init__(self, kill_at: str | None = None, val: dict | None = None, drop_val: str | None = None):
        self.kill_at, self.ran, self.val, self.drop_val = kill_at, [], val or {}, drop_val

    def __call__(self, job, cfg):
        run, key = Path(cfg.run), f"{job.phase}/{job.name}"
        self.ran.append((key, job.argv))
        if job.name in ("sft", "warmup", "ppo"):
            self.verl_job(Path(job.verl_dir), run / job.phase, job.name)
        elif job.name == "merge":
            self.merger(Path(job.verl_dir) / "merged")
        elif job.name == "rewrite":
            (run / job.phase).mkdir(parents=True, exist_ok=True)
            (run / job.phase / "dataset.jsonl").write_text(json.dumps({"input_ids": [1, 2], "loss_mask": [0, 1]}) + "\n")
        elif job.name == "finish":  # the kit's run_rsr: it finds the checkpoint, writes the funnel, DONE last
            assert (run / job.phase / "checkpoint" / "adapter_config.json").is_file()
            (run / job.phase / "funnel.json").write_text(json.dumps({"examples": 1}))
            (run / job.phase / "DONE").write_text("")
        elif job.name == "eval":  # `python -m scale_up.cycle evaluate RUN LABEL CHECKPOINT`
            self.evaluation(run, *job.argv[-2:])
        elif job.name == "floor":
            d = run / "eval-floor"
            d.mkdir(parents=True, exist_ok=True)
            (d / "floor.json").write_text(json.dumps({"suites": {s: {"n_tasks": 4, "strict": 0, "success": 0.0,
                                                                     "process_reward": 0.05} for s in SUITES}}))
            (d / "DONE").write_text("")
        if key == self.kill_at:
            self.kill_at = None
            raise KeyboardInterrupt(f"killed inside {key}")

    def evaluation(self, run: Path, label: str, checkpoint: str):
        """eval-<stage>/ as `loop.phases.run_eval` leaves it: results.json (the figures by the kit's own
        `summarize`, 4 tasks a suite, 2 runs each) and DONE."""
        from rsi_lite.eval.evaluate import summarize
        from rsi_lite.loop.phases import eval_dir

        solved = self.val.get(label, 2)
        trajs = [_trajectory(i, 0, suite=s, ok=(i < solved if s == "val" else i == 0), seed=seed)
                 for s in SUITES for seed in (0, 1) for i in range(4)]
        suites = summarize(trajs, 2)
        if label == self.drop_val:
            del suites["val"]
        d = eval_dir(run, label)
        d.mkdir(parents=True, exist_ok=True)
        (d / "results.json").write_text(json.dumps({"checkpoint": checkpoint, "k": 2, "suites": suites}))
        (d / "DONE").write_text("")

    @staticmethod
    def verl_job(verl_dir: Path, stage: Path, name: str):
        verl_dir.mkdir(parents=True, exist_ok=True)
        rows = []
        for k in range(1, STEPS + 1):
            (verl_dir / f"global_step_{k}" / "actor").mkdir(parents=True, exist_ok=True)
            (verl_dir / f"global_step_{k}" / "critic").mkdir(parents=True, exist_ok=True)
            rows.append({"step": k, "data": {"actor/pg_clipfrac": 0.01 * k, "critic/vf_explained_var": 0.1 * k,
                                             "actor/ppo_kl": 0.001}})
            if name == "ppo":  # the trainer's `rsi_trajectory_dir`
                (stage / "verl-trajectories").mkdir(parents=True, exist_ok=True)
                (stage / "verl-trajectories" / f"step-{k:03d}.jsonl").write_text(
                    "".join(_trajectory(i, k).to_json() + "\n" for i in range(4)))
        (verl_dir / "latest_checkpointed_iteration.txt").write_text(str(STEPS))
        (verl_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    @staticmethod
    def merger(target: Path):
        from safetensors.torch import save_file

        d = target / "lora_adapter"
        d.mkdir(parents=True, exist_ok=True)
        (d / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 64, "lora_alpha": 32}))
        save_file({"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": torch.zeros(64, 8)},
                  str(d / "adapter_model.safetensors"))


def _keys(stand_in):
    return [k for k, _ in stand_in.ran]


HERE = ("base/tasks", "rsr-1/export", "rsr-1/select", "rpr-1/export", "rpr-1/select", "rsr-2/export",
        "rsr-2/select", "rpr-2/export", "rpr-2/select")
"""The steps done in the driver's own process (never handed to the launcher)."""


def test_the_cycle_runs_its_jobs_in_order_and_exports_a_run_the_kit_reads(tmp_path):
    import pandas as pd

    from rsi_lite.report.write import build, failure_shares, stage_table

    cfg = _config(tmp_path)
    stand_in = StandIn(val={"Base": 1, "RSR-1": 2, "RPR-1": 3, "RSR-2": 3, "RPR-2": 4})  # each at least as good
    ran = start(cfg, launch=stand_in, log=lambda *_: None)
    expected = [f"{j.phase}/{j.name}" for j in plan_jobs(cfg)]
    assert ran == expected and _keys(stand_in) == [k for k in expected if k not in HERE]
    assert expected[:19] == ["base/tasks", "base/eval", "base/floor",
                             "rsr-1/rewrite", "rsr-1/sft", "rsr-1/merge", "rsr-1/export", "rsr-1/finish", "rsr-1/eval",
                             "rsr-1/select",
                             "rpr-1/warmup", "rpr-1/ppo", "rpr-1/merge", "rpr-1/export", "rpr-1/eval", "rpr-1/select",
                             "rsr-2/rewrite", "rsr-2/sft", "rsr-2/merge"]
    assert expected[-3:] == ["rpr-2/export", "rpr-2/eval", "rpr-2/select"] and len(expected) == 28
    argv = dict(stand_in.ran)
    run = Path(cfg.run)
    # the critic: RPR-1's from the warm-up, RPR-2's from RPR-1; RPR-2 at its own rate, from RSR-2's adapter
    assert f"trainer.rsi_critic_from={run}/verl/rpr-1-warmup" in argv["rpr-1/ppo"]
    assert f"trainer.rsi_critic_from={run}/verl/rpr-1" in argv["rpr-2/ppo"]
    assert "actor_rollout_ref.actor.optim.lr=1e-06" in argv["rpr-2/ppo"]
    assert not any("optim.lr" in a for a in argv["rpr-1/ppo"])
    assert f"actor_rollout_ref.model.lora_adapter_path={run}/rsr-2/checkpoint" in argv["rpr-2/ppo"]
    assert "--config-name=rsi_27b" in argv["rpr-1/warmup"] and "trainer.critic_warmup=1000000000" in argv["rpr-1/warmup"]
    assert "rpr-2/warmup" not in argv
    assert f"model.lora_adapter_path={run}/rpr-1/actor" in argv["rsr-2/sft"]
    assert not any("lora_adapter_path" in a for a in argv["rsr-1/sft"])  # RSR-1 starts from Base: a fresh adapter
    # the task rows the PPO jobs read are the ones the tasks job wrote, before the first of them
    assert f"data.train_files={cfg.warmup_files}" in argv["rpr-1/warmup"]
    assert f"data.train_files={cfg.train_files}" in argv["rpr-1/ppo"]
    assert all(f"data.val_files={cfg.val_files}" in argv[k] for k in ("rpr-1/warmup", "rpr-1/ppo", "rpr-2/ppo"))
    # every phase's checkpoint evaluated by the kit's command, into the loop's eval-<stage>/
    assert argv["base/eval"][-4:] == ["evaluate", cfg.run, "Base", "base"]
    assert argv["rpr-1/eval"][-4:] == ["evaluate", cfg.run, "RPR-1", f"{run}/rpr-1/actor"]
    assert argv["rsr-2/eval"][-4:] == ["evaluate", cfg.run, "RSR-2", f"{run}/rsr-2/checkpoint"]

    # the task rows: the pool split as the kit's RPR splits it, the val suite for verl's validation files
    train, warm, val = (pd.read_parquet(p) for p in (cfg.train_files, cfg.warmup_files, cfg.val_files))
    assert (len(train), len(warm), len(val)) == (POOL - WARMUP, WARMUP, 27)
    names = [i["task"] for i in train["extra_info"]] + [i["task"] for i in warm["extra_info"]]
    assert sorted(names) == sorted(p.name for p in (run / "pool").iterdir() if (p / "task.toml").is_file())
    assert set(train["agent_name"]) == {"rsi_terminal"}
    assert json.loads((run / "tasks" / "tasks.json").read_text())["warmup"]["rows"] == WARMUP

    # the kit's layout: every phase finished, checkpoints where `rsi-lite eval` and the next stage look
    for phase in ("rsr-1", "rpr-1", "rsr-2", "rpr-2", "eval-base", "eval-rsr-1", "eval-rpr-2", "eval-floor"):
        assert (run / phase / "DONE").is_file()
    for ck in ("rsr-1/checkpoint", "rsr-2/checkpoint", "rpr-1/actor", "rpr-2/actor"):
        assert json.loads((run / ck / "adapter_config.json").read_text())["r"] == 64
    rows = [json.loads(x) for x in (run / "rpr-1" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    assert [r["phase"] for r in rows][:5] == ["calibration"] * 4 + ["joint"]
    assert rows[2]["losses/clipfrac"] == pytest.approx(0.03) and rows[0]["success/mean"] == 0.5
    assert (run / "rpr-1" / "step-003" / "DONE").is_file()
    assert json.loads((run / "rpr-1" / "critic.json").read_text())["verl_checkpoint"].endswith(
        f"verl/rpr-1/global_step_{STEPS}/critic")

    # the kit's own report reads it: the stage table with every phase, the selection, the PPO curves, the shares
    rep = build(run)
    assert [r["stage"] for r in rep["stages"]] == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    assert [r["suites"]["val"]["success"] for r in rep["stages"]] == [0.25, 0.5, 0.75, 0.75, 1.0]
    assert [r["retained"] for r in rep["stages"]] == [False, True, True, True, True]
    assert rep["selection"][0]["RSR-2"]["retained"] == "RSR-2"  # a tie keeps the new checkpoint
    assert rep["stages"][2]["checkpoint"] == f"{run}/rpr-1/actor" and rep["floor"]["suites"]["val"]["n_tasks"] == 4
    table = stage_table(rep)
    assert "| RPR-2 (retained) |" in table and "| Base |" in table and "*doing nothing (no command)*" in table
    curve = rep["curves"][0]["rpr-1"]
    assert curve["losses/clipfrac"][:2] == pytest.approx([0.01, 0.02]) and curve["success/mean"][0] == 0.5
    assert failure_shares(run / "rpr-2")["episodes"] == 4 * STEPS
    assert rep["funnel"][0]["RSR-1"] == {"examples": 1}
    result = json.loads((run / "result.json").read_text())
    assert result["retained"] == "RPR-2" and result["final_checkpoint"] == f"{run}/rpr-2/actor"
    assert (run / "DONE").is_file()


def test_a_checkpoint_worse_on_val_is_not_carried_forward(tmp_path):
    """As the CPU loop: RSR-1 worse than Base, so RPR-1 trains a fresh adapter from Base; RPR-1 better than Base, so
    RSR-2 continues it; RPR-2 worse than RSR-2, so RSR-2's checkpoint is the run's result."""
    cfg = _config(tmp_path)
    stand_in = StandIn(val={"Base": 2, "RSR-1": 1, "RPR-1": 3, "RSR-2": 3, "RPR-2": 2})
    start(cfg, launch=stand_in, log=lambda *_: None)
    argv, run = dict(stand_in.ran), Path(cfg.run)
    assert not any("lora_adapter_path" in a for a in argv["rpr-1/ppo"] + argv["rpr-1/warmup"])
    assert argv["rsr-2/rewrite"][-2] == f"{run}/rpr-1/actor"
    sel = json.loads((run / "selection.json").read_text())
    assert [sel[p]["retained"] for p in ("RSR-1", "RPR-1", "RSR-2", "RPR-2")] == ["Base", "RPR-1", "RSR-2", "RSR-2"]
    assert "Base is better" in sel["RSR-1"]["why"] and sel["RSR-1"]["candidates"]["RSR-1"]["val_success"] == 0.25
    assert f"actor_rollout_ref.model.lora_adapter_path={run}/rsr-2/checkpoint" in argv["rpr-2/ppo"]
    result = json.loads((run / "result.json").read_text())
    assert result["retained"] == "RSR-2" and result["final_checkpoint"] == f"{run}/rsr-2/checkpoint"


def test_the_plan_waits_on_the_selection_and_writes_nothing(tmp_path):
    cfg = _config(tmp_path)
    jobs = {f"{j.phase}/{j.name}": j for j in plan_jobs(cfg)}
    assert not Path(cfg.run).exists()
    assert jobs["rsr-1/rewrite"].argv[-2] == "base"  # RSR-1 always starts from Base
    assert "<the checkpoint retained after RSR-1: RUN/selection.json>" in jobs["rpr-1/ppo"].describe()
    assert jobs["rpr-1/select"].args["incoming"][0] == "retained after RSR-1"
    Path(cfg.run).mkdir(parents=True)
    (Path(cfg.run) / "selection.json").write_text(json.dumps({"RSR-1": {"retained": "Base", "checkpoint": "base"}}))
    jobs = {f"{j.phase}/{j.name}": j for j in plan_jobs(cfg)}
    assert jobs["rpr-1/select"].args == {"incoming": ["Base", "base"], "new": ["RPR-1", f"{cfg.run}/rpr-1/actor"]}
    assert "retained after RPR-1" in jobs["rsr-2/rewrite"].describe()


@pytest.mark.parametrize("killed", ["base/eval", "rsr-1/sft", "rsr-1/eval", "rpr-1/ppo", "rsr-2/rewrite",
                                    "rpr-2/merge", "rpr-2/eval"])
def test_a_killed_cycle_resumes_at_the_job_it_was_killed_in(tmp_path, killed):
    cfg = _config(tmp_path)
    expected = [f"{j.phase}/{j.name}" for j in plan_jobs(cfg)]
    first = StandIn(kill_at=killed)
    with pytest.raises(KeyboardInterrupt):
        start(cfg, launch=first, log=lambda *_: None)
    assert _keys(first)[-1] == killed
    # what finished before the kill is marked; the killed job is not
    phase, name = killed.split("/")
    assert not (Path(cfg.run) / phase / "jobs" / name / "DONE").is_file()
    if name not in ("eval", "select"):  # a training phase's DONE comes with its export or its finish job
        assert not (Path(cfg.run) / phase / "DONE").is_file()

    (Path(cfg.run) / "run.json").unlink()  # as if the first start had been killed before writing it
    again = StandIn()
    ran = start(CycleConfig(run=cfg.run, model="/elsewhere"), launch=again, log=lambda *_: None)
    assert json.loads((Path(cfg.run) / "run.json").read_text())["profile"]["model"] == "/models/base"
    assert ran == expected[expected.index(killed):]  # from the killed job on, nothing finished is run again
    assert all((Path(cfg.run) / p / "DONE").is_file() for p in ("rsr-1", "rpr-1", "rsr-2", "rpr-2", "eval-rpr-2"))
    # the resumed run keeps the config it started with (cycle.json), not the one given again
    assert not [a for _, argv in again.ran for a in argv if "/elsewhere" in a]
    assert start(cfg, launch=StandIn(), log=lambda *_: None) == []  # a finished cycle runs nothing


def test_a_finish_job_that_leaves_no_done_stays_unfinished(tmp_path):
    """RSR-N's DONE is the kit's `run_rsr`'s own: a finish job that ran without writing it stops the cycle, and the
    job is run again on resume."""
    class NoDone(StandIn):
        def __call__(self, job, cfg):
            super().__call__(job, cfg)
            if job.name == "finish":
                (Path(cfg.run) / job.phase / "DONE").unlink()

    cfg = _config(tmp_path)
    with pytest.raises(RuntimeError, match=r"rsr-1: its finish job ran but the stage wrote no DONE"):
        start(cfg, launch=NoDone(), log=lambda *_: None)
    assert not (Path(cfg.run) / "rsr-1" / "jobs" / "finish" / "DONE").is_file()
    assert start(cfg, launch=StandIn(), log=lambda *_: None)[0] == "rsr-1/finish"


def test_bad_input_is_named_by_file_and_field(tmp_path):
    from scale_up.export import verl_metrics
    from scale_up.kit_jobs import finish, run_settings

    # an evaluation without val figures: the select job stops, naming the file and the field
    cfg = _config(tmp_path)
    with pytest.raises(ValueError, match=r"eval-rsr-1/results.json: suites.val missing"):
        start(cfg, launch=StandIn(drop_val="RSR-1"), log=lambda *_: None)
    assert not (Path(cfg.run) / "rsr-1" / "jobs" / "select" / "DONE").is_file()
    # a saved cycle.json with a field the config does not have
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "cycle.json").write_text(json.dumps({"run": str(bad), "model": "m", "stpes": 3}))
    with pytest.raises(ValueError, match=r"bad/cycle.json: field\(s\) stpes are not CycleConfig fields"):
        start(CycleConfig(run=str(bad), model="m"), launch=StandIn(), log=lambda *_: None)
    # a directory holding another run (the CPU loop's run.json, no cycle.json) is not taken over
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "run.json").write_text(json.dumps({"profile": {"name": "tiny"}, "seeds": [0]}))
    with pytest.raises(FileExistsError, match=r"cpu/run.json: a run that is not a cycle's is here"):
        start(CycleConfig(run=str(tmp_path / "cpu"), model="m"), launch=StandIn())
    assert not (tmp_path / "cpu" / "cycle.json").exists()
    # evaluation settings that are not EvalConfig's, or without val, refused before anything is written
    with pytest.raises(ValueError, match=r"CycleConfig.eval: kk are not EvalConfig fields"):
        start(CycleConfig(run=str(tmp_path / "r2"), model="m", eval={"kk": 3}), launch=StandIn())
    with pytest.raises(ValueError, match=r"CycleConfig.eval.suites: \['core'\] lacks 'val'"):
        start(CycleConfig(run=str(tmp_path / "r3"), model="m", eval={"suites": ["core"]}), launch=StandIn())
    assert not (tmp_path / "r2" / "cycle.json").exists() and not (tmp_path / "r3" / "run.json").exists()
    # run.json without the evaluation settings the eval job reads
    (tmp_path / "r4").mkdir()
    (tmp_path / "r4" / "run.json").write_text(json.dumps({"profile": {"name": "verl-27b", "model": "m"}}))
    with pytest.raises(ValueError, match=r"r4/run.json: profile.eval missing"):
        run_settings(tmp_path / "r4")
    # a finish job before the export: it would fine-tune a float32 copy of the base on one node, so it stops first
    with pytest.raises(FileNotFoundError, match=r"nock/rsr-1/checkpoint/adapter_config.json: missing; the export"):
        finish(str(tmp_path / "nock"), 1)
    assert not (tmp_path / "nock" / "rsr-1").exists()
    # verl's file logger rows without their data
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "metrics.jsonl").write_text(json.dumps({"step": 1, "data": {}}) + "\n" + json.dumps({"step": 2}))
    with pytest.raises(ValueError, match=r"v/metrics.jsonl: row 2: field 'data' missing"):
        verl_metrics(tmp_path / "v")


def test_the_trainer_writes_each_steps_episodes_and_finds_the_newest_critic(tmp_path):
    """What the PPO job leaves for the export (`trainer.rsi_trajectory_dir`: the agent loop's `rsi_trajectory`
    field, one file a step), and `trainer.rsi_critic_from` given a verl run's directory: its newest step's critic."""
    from scale_up.trainer import inherited_critic_path, write_trajectories

    line = _trajectory(0, 0).to_json()
    out = write_trajectories(str(tmp_path / "t"), 3, [{"rsi_trajectory": line}, {}, {"rsi_trajectory": line}])
    assert Path(out).name == "step-003.jsonl" and Path(out).read_text().splitlines() == [line, line]
    assert write_trajectories(None, 3, [{"rsi_trajectory": line}]) is None
    StandIn.verl_job(tmp_path / "verl", tmp_path / "stage", "warmup")
    assert inherited_critic_path(str(tmp_path / "verl")) == str(tmp_path / "verl" / f"global_step_{STEPS}" / "critic")


def test_the_eval_and_floor_jobs_write_what_the_report_reads(tmp_path, model_dir):
    """The real `evaluate` and `floor` jobs (the kit's environment, its own `run_eval` and `run_floor`, the bundled
    model at the run's evaluation settings, here one val task once) leave eval-base/ and eval-floor/ as the CPU
    loop does, and the report and the selection read them; the eval job records how it loaded the policy."""
    from rsi_lite.loop.phases import select_on_val
    from rsi_lite.report.write import build, stage_table
    from scale_up.cycle import _first_start
    from scale_up.settings import episode_fields

    # on this machine's CPU, not on replicas over a cluster (`serve`, the default, needs verl's vLLM)
    cfg = CycleConfig(run=str(tmp_path / "run"), model=model_dir, serve=False, eval={
        "suites": ["val"], "k": 1, "limit": 1, "rollout": {"max_turns": 1, "max_new_tokens": 16, "batch_size": 1}})
    run = Path(cfg.run)
    run.mkdir()
    _first_start(run, cfg)
    ev = json.loads((run / "run.json").read_text())["profile"]["eval"]
    assert ev["k"] == 1 and ev["rollout"]["temperature"] == 0.6 and ev["rollout"]["max_new_tokens"] == 16
    # the episode's shape is PPO's (configs/rsi_27b.yaml's rsi section) where cfg.eval does not set it
    shape = episode_fields()
    assert shape["action_format"] == "json" and shape["context_budget"] == 262144
    assert {f: ev["rollout"][f] for f in shape} == {**shape, "max_turns": 1, "max_new_tokens": 16}
    for args in (["evaluate", cfg.run, "Base", "base"], ["floor", cfg.run]):
        subprocess.run([kit_python(), "-m", "scale_up.cycle", *args], cwd=REPO, env=kit_env(), check=True,
                       timeout=900)
    doc = json.loads((run / "eval-base" / "results.json").read_text())
    assert (run / "eval-base" / "DONE").is_file() and (run / "eval-base" / "trajectories.jsonl").is_file()
    assert doc["checkpoint"] == "base" and doc["k"] == 1 and doc["rollout"]["temperature"] == 0.6
    assert doc["suites"]["val"]["episodes"] == 1
    # how the job loaded the policy (`scale_up.loading`): here, with no CUDA, the kit's float32 model at the run's
    # own settings, as before
    loaded = json.loads((run / "eval-base" / "loading.json").read_text())
    assert loaded["route"] == "hf" and loaded["dtype"] == "float32" and loaded["generation_backend"] is None
    assert loaded["batch_size"] == 1 and loaded["memory"] is None
    rep = build(run)
    assert [r["stage"] for r in rep["stages"]] == ["Base"] and rep["stages"][0]["suites"]["val"]["n_tasks"] == 1
    assert rep["floor"]["suites"]["val"]["n_tasks"] == 1 and "| Base |" in stage_table(rep)
    # the selection reads the same file: a candidate as good as Base on val is kept
    (run / "eval-rsr-1").mkdir()
    (run / "eval-rsr-1" / "results.json").write_text(json.dumps({**doc, "checkpoint": "x"}))
    (run / "eval-rsr-1" / "DONE").write_text("")
    assert select_on_val(run, "RSR-1", ("Base", "base"), ("RSR-1", "x"), log=lambda *_: None) == ("RSR-1", "x")


def test_the_rewrite_job_samples_episodes_shaped_as_ppos(tmp_path, monkeypatch):
    """The `rewrite` job runs the kit's self-rewrite with the `gpu` profile's settings and PPO's episode shape
    (configs/rsi_27b.yaml's `rsi` section with the run's rsi.* overrides, fixed in run.json at the first start:
    JSON actions, its turns, tokens and context), so the SFT that follows teaches the format PPO samples; the
    harness stays the self-rewrite's own."""
    from contextlib import contextmanager

    from rsi_lite.loop.profiles import profile
    from scale_up import kit_jobs
    from scale_up.cycle import _first_start
    from scale_up.settings import episode_fields

    seen = {}

    @contextmanager
    def no_servers(*_a, **_k):
        yield None

    def run_rsr(run, cycle, cfg, until, load):
        seen.update(cycle=cycle, until=until, rollout=cfg.rollout)

    monkeypatch.setattr(kit_jobs, "serving", no_servers)
    monkeypatch.setattr("rsi_lite.tasks.suites.ensure_pool", lambda run, n: run / "pool")
    monkeypatch.setattr("rsi_lite.rsr.stage.run_rsr", run_rsr)
    cfg = CycleConfig(run=str(tmp_path), model="/models/base", overrides=["rsi.max_turns=32", "data.shuffle=false"])
    _first_start(tmp_path, cfg)
    kit_jobs.rewrite(str(tmp_path), 1, "base", "/models/base")
    shape, own = {**episode_fields(), "max_turns": 32}, profile("gpu").rsr.rollout
    assert seen["cycle"] == 1 and seen["until"] == "dataset"
    assert {f: getattr(seen["rollout"], f) for f in shape} == shape and shape["action_format"] == "json"
    assert seen["rollout"].harness == own.harness and seen["rollout"].temperature == own.temperature
    ev = json.loads((tmp_path / "run.json").read_text())["profile"]["eval"]["rollout"]
    assert ev["max_turns"] == 32 and ev["action_format"] == "json"  # the evaluations share it
    (tmp_path / "run.json").write_text(json.dumps({"profile": {"eval": {}}}))  # a run.json without it
    with pytest.raises(ValueError, match=r"run.json: profile.episode missing"):
        kit_jobs.rewrite(str(tmp_path), 1, "base", "/models/base")
