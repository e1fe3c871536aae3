"""The cycle driver (`scale_up.cycle`): RSR-1 -> RPR-1 -> RSR-2 -> RPR-2 as verl jobs in the kit's run directory,
the jobs replaced by a stand-in that writes what each writes (verl's checkpoints, its tracker file and file-logger
metrics, the merger's adapter, the trainer's trajectories, the kit's self-rewrite files). Checked: the jobs' order
and commands (the inherited critic, RPR-2's rate), the export into the kit's layout read by the kit's own report,
and DONE/resume: a run killed inside a job resumes at that job, every finished one skipped.

Run (verl's environment):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_cycle.py
"""

import json
from pathlib import Path

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402

from scale_up.cycle import CycleConfig, plan_jobs, start  # noqa: E402

STEPS = 6


def _trajectory(i: int, step: int) -> str:
    from rsi_lite.rollout.trajectory import Trajectory

    ok = (i + step) % 2 == 0
    return Trajectory(task=f"t{i}", task_path="", suite="pool", family="f", difficulty="easy", harness="plain",
                      action_format="json", policy="verl", seed=i, system="", messages=[], token_ids=[1, 2, 3],
                      action_mask=[0, 1, 1], logprobs=[0.0, -1.0, -1.0], turn_spans=[[1, 3]], finish_reason="complete",
                      turns=1, verifier={"strict": int(ok), "passed": 1, "total": 2},
                      rewards={"s": float(ok), "fdr": 0.5, "spr": 1.0 if ok else 0.25},
                      tokens={"generated": 2}, timings={}).to_json()


class StandIn:
    """Writes what each job writes instead of running it; `kill_at` ("phase/job") raises there once, as a job killed
    half-way (after writing part of its checkpoints) would leave the run."""

    def __init__(self, kill_at: str | None = None):
        self.kill_at, self.ran = kill_at, []

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
        if key == self.kill_at:
            self.kill_at = None
            raise KeyboardInterrupt(f"killed inside {key}")

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
                    "".join(_trajectory(i, k) + "\n" for i in range(4)))
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


def test_the_cycle_runs_its_jobs_in_order_and_exports_a_run_the_kit_reads(tmp_path):
    from rsi_lite.report.write import build, failure_shares

    cfg = CycleConfig(run=str(tmp_path / "run"), model="/models/base", steps=STEPS)
    stand_in = StandIn()
    ran = start(cfg, launch=stand_in, log=lambda *_: None)
    expected = [f"{j.phase}/{j.name}" for j in plan_jobs(cfg)]
    assert ran == expected and _keys(stand_in) == [k for k in expected if not k.endswith("/export")]
    assert expected[:9] == ["rsr-1/rewrite", "rsr-1/sft", "rsr-1/merge", "rsr-1/export", "rsr-1/finish",
                            "rpr-1/warmup", "rpr-1/ppo", "rpr-1/merge", "rpr-1/export"]
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

    # the kit's layout: every phase finished, checkpoints where `rsi-lite eval` and the next stage look
    for phase in ("rsr-1", "rpr-1", "rsr-2", "rpr-2"):
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

    # the kit's own report reads it: the PPO curves and the reward shares from the exported steps
    rep = build(run)
    curve = rep["curves"][0]["rpr-1"]
    assert curve["losses/clipfrac"][:2] == pytest.approx([0.01, 0.02]) and curve["success/mean"][0] == 0.5
    assert failure_shares(run / "rpr-2")["episodes"] == 4 * STEPS
    assert rep["funnel"][0]["RSR-1"] == {"examples": 1}


@pytest.mark.parametrize("killed", ["rsr-1/sft", "rpr-1/ppo", "rsr-2/rewrite", "rpr-2/merge"])
def test_a_killed_cycle_resumes_at_the_job_it_was_killed_in(tmp_path, killed):
    cfg = CycleConfig(run=str(tmp_path / "run"), model="/models/base", steps=STEPS)
    expected = [f"{j.phase}/{j.name}" for j in plan_jobs(cfg)]
    first = StandIn(kill_at=killed)
    with pytest.raises(KeyboardInterrupt):
        start(cfg, launch=first, log=lambda *_: None)
    assert _keys(first)[-1] == killed
    # what finished before the kill is marked; the killed job and its phase are not
    phase = killed.split("/")[0]
    assert not (Path(cfg.run) / phase / "DONE").is_file()
    assert not (Path(cfg.run) / phase / "jobs" / killed.split("/")[1] / "DONE").is_file()

    again = StandIn()
    ran = start(CycleConfig(run=cfg.run, model="/elsewhere"), launch=again, log=lambda *_: None)
    assert ran == expected[expected.index(killed):]  # from the killed job on, nothing finished is run again
    assert all((Path(cfg.run) / p / "DONE").is_file() for p in ("rsr-1", "rpr-1", "rsr-2", "rpr-2"))
    # the resumed run keeps the config it started with (cycle.json), not the one given again
    assert not [a for _, argv in again.ran for a in argv if "/elsewhere" in a]
    assert start(cfg, launch=StandIn(), log=lambda *_: None) == []  # a finished cycle runs nothing


def test_the_trainer_writes_each_steps_episodes_and_finds_the_newest_critic(tmp_path):
    """What the PPO job leaves for the export (`trainer.rsi_trajectory_dir`: the agent loop's `rsi_trajectory`
    field, one file a step), and `trainer.rsi_critic_from` given a verl run's directory: its newest step's critic."""
    from scale_up.trainer import inherited_critic_path, write_trajectories

    line = _trajectory(0, 0)
    out = write_trajectories(str(tmp_path / "t"), 3, [{"rsi_trajectory": line}, {}, {"rsi_trajectory": line}])
    assert Path(out).name == "step-003.jsonl" and Path(out).read_text().splitlines() == [line, line]
    assert write_trajectories(None, 3, [{"rsi_trajectory": line}]) is None
    StandIn.verl_job(tmp_path / "verl", tmp_path / "stage", "warmup")
    assert inherited_critic_path(str(tmp_path / "verl")) == str(tmp_path / "verl" / f"global_step_{STEPS}" / "critic")
