"""The cycle at scale: RSR-1 -> RPR-1 -> RSR-2 -> RPR-2 as verl jobs, in the kit's run directory.

    python -m scale_up.cycle --run RUN --model MODEL [--launcher slurm] [--steps 20] [--dry-run]

Each phase is a list of jobs run one after another. A job is a command (the kit's environment, verl's, or a
Slurm job of verl's) or a step done here (the export); each gets a directory RUN/<phase>/jobs/<job>/ whose DONE
is written once it has finished, and the phase's own DONE (`rsi_lite.rundir`) once its last job has. Started
again after a kill, the cycle skips every finished phase and job and runs the first unfinished job again from
its start: verl's own `trainer.resume_mode: auto` then resumes that job from its newest `global_step_N`.

    RSR-N  rewrite   the kit's self-rewrite up to rsr-N/dataset.jsonl (`run_rsr(until="dataset")`, the `gpu`
                     profile's settings, the kit's environment and generation backend)
           sft       verl's SFT trainer on it (configs/rsi_sft.yaml, `KitSFTDataset`)    -> RUN/verl/rsr-N/
           merge     verl's model merger on the newest step's actor                     -> RUN/verl/rsr-N/merged/
           export    the adapter into rsr-N/checkpoint/, verl's SFT metrics into rsr-N/sft.json
           finish    the kit's `run_rsr` again: it finds the checkpoint, writes funnel.json and DONE
    RPR-N  warmup    (cycle one) the critic warm-up, rsi_27b + WARMUP_OVERRIDES            -> RUN/verl/rpr-1-warmup/
           ppo       verl's PPO with the kit's TB-GAE (configs/rsi_27b.yaml) from rsr-N's adapter, the critic
                     inherited from the warm-up (cycle one) or from RPR-(N-1) (`trainer.rsi_critic_from`)
           merge     as above                                                           -> RUN/verl/rpr-N/merged/
           export    the adapter into rpr-N/actor/; each logged step into rpr-N/step-KKK/ (metrics.json, the
                     episodes as the kit's trajectories.jsonl, DONE), rpr-N/metrics.jsonl, summary.json, DONE

So `rsi-lite report RUN` reads the funnels, the PPO curves and the reward shares, and `rsi-lite eval
--checkpoint RUN/rpr-1/actor` evaluates an exported actor, as for a CPU run. The critic stays verl's (a
full-weight value model, configs/rsi_27b.yaml says why): rpr-N/critic.json names its checkpoint.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rsi_lite.records import read_jsonl, write_json_atomic, write_jsonl_atomic
from rsi_lite.rundir import StageDir, rpr_dir, rsr_dir

from .export import export_actor

REPO = Path(__file__).resolve().parents[1]
PHASES = ("rsr-1", "rpr-1", "rsr-2", "rpr-2")
METRIC_NAMES = {"losses/clipfrac": "actor/pg_clipfrac", "losses/approx_kl": "actor/ppo_kl",
                "losses/explained_variance_before": "critic/vf_explained_var", "losses/policy": "actor/pg_loss",
                "losses/value": "critic/vf_loss", "returns/mean": "critic/returns/mean"}
"""The kit's metric glossary -> verl's names for the same quantity (what the report's curves read)."""


@dataclass
class CycleConfig:
    """What the cycle runs with; written to RUN/cycle.json at the first start and read back on a resume."""

    run: str
    """The run directory (on a filesystem every node sees)."""
    model: str
    """The base model: a local Hugging Face model directory."""
    launcher: str = "local"
    """'local': verl's jobs run here (`python -m scale_up.main`, torchrun for SFT); 'slurm': each verl job is
    `sbatch --wait scale_up/jobs/slurm.sbatch` (a Ray cluster over the allocation's nodes)."""
    steps: int = 20
    """PPO steps of each RPR phase (four critic-only, then joint: configs/rsi_27b.yaml)."""
    rpr2_actor_lr: float = 1e-6
    """RPR-2's actor learning rate (RPR-1's is the config's): the paper's ratio between the cycles at LoRA scale."""
    train_files: str = ""
    """verl's task rows (python -m scale_up.data): default RUN/tasks/train.parquet."""
    warmup_files: str = ""
    """The critic warm-up's task rows: default RUN/tasks/warmup.parquet."""
    verl_python: str = ".venv-verl/bin/python"
    kit_python: str = ".venv/bin/python"
    nnodes: int = 4
    gpus_per_node: int = 8
    overrides: list = field(default_factory=list)
    """Further Hydra overrides for every verl PPO job."""

    def __post_init__(self):
        self.run = str(Path(self.run).absolute())
        self.train_files = self.train_files or f"{self.run}/tasks/train.parquet"
        self.warmup_files = self.warmup_files or f"{self.run}/tasks/warmup.parquet"


@dataclass
class Job:
    """One job of a phase: `argv` run by the launcher (`env` says which environment: 'kit', 'verl', or
    'cluster' for a verl job that needs the GPUs), or, with `argv` empty, the step `name` done in this process."""

    phase: str
    name: str
    argv: list = field(default_factory=list)
    env: str = "verl"
    verl_dir: str = ""
    """The verl run this job writes or reads (its `default_local_dir`)."""

    def dir(self, run: str) -> StageDir:
        return StageDir(Path(run) / self.phase / "jobs" / self.name)

    def describe(self) -> str:
        what = shlex.join(self.argv) if self.argv else f"(in this process: {self.name} into {self.phase}/)"
        return f"[{self.phase} {self.name}, {self.env}] {what}"


# ---------------------------------------------------------------- the jobs

WARMUP_OVERRIDES = ["trainer.critic_warmup=1000000000", "trainer.total_epochs=1", "trainer.rsi_critic_from=null"]
"""The critic warm-up as its own verl phase over rsi_27b.yaml (the paper: one epoch of the warm-up tasks with the
RSR-1 actor frozen, the critic learning values; RPR-1 then inherits this critic and runs its critic-only steps):
verl updates the actor once critic_warmup <= step, so out of reach it never does; one pass; a fresh critic.
Overrides, not a config file: Hydra takes `hydra.searchpath` (which rsi_27b.yaml needs for verl's defaults) only
from the primary config, so a file that included rsi_27b could not be composed
(tests/scale_up/test_config.py composes rsi_27b with these and runs verl's checks)."""


def _verl_ppo(cfg: CycleConfig, config_name: str, experiment: str, overrides: list[str]) -> list[str]:
    common = [f"--config-name={config_name}", f"trainer.experiment_name={experiment}",
              f"actor_rollout_ref.model.path={cfg.model}", *overrides, *cfg.overrides]
    if cfg.launcher == "slurm":  # the job script sets the nodes, the GPUs and default_local_dir from RUN
        return ["sbatch", "--wait", f"--nodes={cfg.nnodes}", str(REPO / "scale_up/jobs/slurm.sbatch"), *common]
    return [cfg.verl_python, "-m", "scale_up.main", *common, f"trainer.nnodes={cfg.nnodes}",
            f"trainer.n_gpus_per_node={cfg.gpus_per_node}", f"trainer.default_local_dir={cfg.run}/verl/{experiment}"]


def _merge(cfg: CycleConfig, phase: str, verl_dir: str) -> Job:
    return Job(phase, "merge", [cfg.verl_python, "-m", "scale_up.cycle", "merge", verl_dir, f"{verl_dir}/merged"],
               "verl", verl_dir)


def rsr_jobs(cfg: CycleConfig, cycle: int) -> list[Job]:
    phase, run = f"rsr-{cycle}", cfg.run
    init = "base" if cycle == 1 else f"{run}/rpr-{cycle - 1}/actor"
    verl_dir = f"{run}/verl/{phase}"
    sft = ["--config-path", str(REPO / "scale_up/configs"), "--config-name", "rsi_sft",
           f"data.train_files={run}/{phase}/dataset.jsonl", f"model.path={cfg.model}",
           f"trainer.experiment_name={phase}", f"trainer.default_local_dir={verl_dir}",
           f"trainer.nnodes={cfg.nnodes}", f"trainer.n_gpus_per_node={cfg.gpus_per_node}"]
    if cycle > 1:
        sft.append(f"model.lora_adapter_path={init}")  # RPR-1's actor, continued
    torchrun = [cfg.verl_python, "-m", "torch.distributed.run", f"--nnodes={cfg.nnodes}",
                f"--nproc_per_node={cfg.gpus_per_node}", "-m", "verl.trainer.sft_trainer", *sft]
    if cfg.launcher == "slurm":
        torchrun = ["sbatch", "--wait", f"--nodes={cfg.nnodes}", "--export=ALL,RSI_ENTRY=sft",
                    str(REPO / "scale_up/jobs/slurm.sbatch"), *sft]
    kit = [cfg.kit_python, "-m", "scale_up.cycle"]
    return [Job(phase, "rewrite", [*kit, "rewrite", run, str(cycle), init, cfg.model], "kit"),
            Job(phase, "sft", torchrun, "cluster", verl_dir),
            _merge(cfg, phase, verl_dir),
            Job(phase, "export", [], "here", verl_dir),
            Job(phase, "finish", [*kit, "finish", run, str(cycle)], "kit")]


def rpr_jobs(cfg: CycleConfig, cycle: int) -> list[Job]:
    phase, run = f"rpr-{cycle}", cfg.run
    verl_dir = f"{run}/verl/{phase}"
    actor = f"actor_rollout_ref.model.lora_adapter_path={run}/rsr-{cycle}/checkpoint"
    jobs = []
    if cycle == 1:
        warm = f"{run}/verl/rpr-1-warmup"
        jobs.append(Job(phase, "warmup", _verl_ppo(cfg, "rsi_27b", "rpr-1-warmup",
                                                   [actor, f"data.train_files={cfg.warmup_files}", *WARMUP_OVERRIDES]),
                        "cluster", warm))
        critic = warm
    else:
        critic = f"{run}/verl/rpr-{cycle - 1}"
    ppo = [actor, f"data.train_files={cfg.train_files}", f"trainer.total_training_steps={cfg.steps}",
           f"trainer.rsi_critic_from={critic}", f"trainer.rsi_trajectory_dir={run}/{phase}/verl-trajectories"]
    if cycle > 1:
        ppo.append(f"actor_rollout_ref.actor.optim.lr={cfg.rpr2_actor_lr}")
    jobs += [Job(phase, "ppo", _verl_ppo(cfg, "rsi_27b", phase, ppo), "cluster", verl_dir),
             _merge(cfg, phase, verl_dir), Job(phase, "export", [], "here", verl_dir)]
    return jobs


def plan_jobs(cfg: CycleConfig) -> list[Job]:
    """Every job of the cycle, in order."""
    return [j for c in (1, 2) for j in (rsr_jobs(cfg, c) + rpr_jobs(cfg, c))]


# ---------------------------------------------------------------- the steps done here

def latest_step(verl_dir: str | Path) -> Path:
    """verl's newest checkpoint of a run (`global_step_N`, from its latest_checkpointed_iteration.txt)."""
    marker = Path(verl_dir) / "latest_checkpointed_iteration.txt"
    if not marker.is_file():
        raise FileNotFoundError(f"{marker}: missing (the verl job saved no checkpoint)")
    return Path(verl_dir) / f"global_step_{int(marker.read_text().strip())}"


def verl_metrics(verl_dir: str | Path) -> list[dict]:
    """verl's file logger's rows ({"step": k, "data": {...}}) as {"step": k, **data}, the last row of a step
    kept (a resumed job logs its step again)."""
    path = Path(verl_dir) / "metrics.jsonl"
    rows = {r["step"]: {"step": r["step"], **r["data"]} for r in read_jsonl(path)} if path.is_file() else {}
    return [rows[k] for k in sorted(rows)]


def kit_row(row: dict, trajs: list[dict], critic_only_below: int) -> dict:
    """One verl step's metrics in the kit's glossary (verl's own names kept beside them)."""
    k = row["step"]
    out = {**row, "phase": "calibration" if k < critic_only_below else "joint"}
    out.update({kit: row[v] for kit, v in METRIC_NAMES.items() if v in row})
    if trajs:
        successes = sum(bool(t.get("verifier", {}).get("strict")) for t in trajs)
        out.update({"success/mean": successes / len(trajs), "success/any": int(successes > 0), "episodes": len(trajs),
                    "tokens/generated": sum(t.get("tokens", {}).get("generated", 0) for t in trajs)})
    return out


def export_rpr(run: str, phase: str, verl_dir: str, critic_only_below: int = 5) -> dict:
    """RPR-N's verl run into the kit's rpr-N/ (see the module docstring); returns the summary."""
    stage = StageDir(Path(run) / phase)
    export_actor(Path(verl_dir) / "merged", stage / "actor")
    newest = latest_step(verl_dir)
    stage.write("critic.json", {"verl_checkpoint": str(newest / "critic"),
                                "note": "verl's full-weight value model; trainer.rsi_critic_from inherits it"})
    rows = []
    for row in verl_metrics(verl_dir):
        src = stage / "verl-trajectories" / f"step-{row['step']:03d}.jsonl"
        trajs = read_jsonl(src) if src.is_file() else []
        kit = kit_row(row, trajs, critic_only_below)
        step = stage.step(row["step"])
        step.path.mkdir(parents=True, exist_ok=True)
        write_jsonl_atomic(step / "trajectories.jsonl", trajs)
        step.write("metrics.json", kit)
        step.mark_done()
        rows.append(kit)
    write_jsonl_atomic(stage / "metrics.jsonl", rows)
    summary = {"steps": len(rows), "verl_run": str(verl_dir), "checkpoint": str(newest),
               "final": {k: rows[-1].get(k) for k in ("success/mean", "losses/clipfrac")} if rows else {}}
    stage.write("summary.json", summary)
    return summary


def export_rsr(run: str, phase: str, verl_dir: str) -> None:
    """RSR-N's SFT: the adapter into rsr-N/checkpoint/, verl's metrics into rsr-N/sft.json (the funnel's `sft`)."""
    stage = StageDir(Path(run) / phase)
    export_actor(Path(verl_dir) / "merged", stage / "checkpoint")
    rows = verl_metrics(verl_dir)
    stage.write("sft.json", {"trainer": "verl", "steps": len(rows), "verl_run": str(verl_dir),
                             "checkpoint": str(latest_step(verl_dir)), "last": rows[-1] if rows else {}})


# ---------------------------------------------------------------- the driver

def run_local(job: Job, cfg: CycleConfig) -> None:
    """The default launcher: the job's command here; a non-zero exit raises (the job stays unfinished)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "MODEL": cfg.model, "RUN": cfg.run}
    if job.verl_dir:  # verl's file logger: the job's metrics beside its checkpoints (what the export reads)
        env["VERL_FILE_LOGGER_PATH"] = f"{job.verl_dir}/metrics.jsonl"
        Path(job.verl_dir).mkdir(parents=True, exist_ok=True)
    print("+", shlex.join(job.argv), flush=True)
    subprocess.run(job.argv, check=True, cwd=REPO, env=env)


def start(cfg: CycleConfig, launch=run_local, log=print) -> list[str]:
    """Run (or resume) the cycle in cfg.run; returns the jobs run by this call, as "phase/job"."""
    run = Path(cfg.run)
    run.mkdir(parents=True, exist_ok=True)
    saved = run / "cycle.json"
    if saved.is_file():
        cfg = CycleConfig(**json.loads(saved.read_text()))
    else:
        write_json_atomic(saved, asdict(cfg))
    if not (run / "run.json").is_file():  # what `rsi-lite report` reads first
        write_json_atomic(run / "run.json", {"profile": {"name": "verl-27b", "cycle": asdict(cfg)}, "seeds": [0],
                                             "controls": [], "cycles": 2})
    ran = []
    for phase in PHASES:
        stage = StageDir(run / phase)
        if stage.done:
            continue
        cycle = int(phase[-1])
        for job in (rsr_jobs if phase.startswith("rsr") else rpr_jobs)(cfg, cycle):
            d = job.dir(cfg.run)
            if d.done:
                continue
            log(f"[{phase}] {job.name}")
            if job.argv:
                launch(job, cfg)
            elif phase.startswith("rpr"):
                export_rpr(cfg.run, phase, job.verl_dir)
            else:
                export_rsr(cfg.run, phase, job.verl_dir)
            d.path.mkdir(parents=True, exist_ok=True)
            d.write("job.json", {"argv": job.argv, "env": job.env})
            d.mark_done()
            ran.append(f"{phase}/{job.name}")
        if phase.startswith("rpr"):
            stage.mark_done()  # RSR's DONE is the kit's `run_rsr`'s own (its finish job)
        elif not stage.done:
            raise RuntimeError(f"{stage}: every job finished but the stage wrote no DONE")
    StageDir(run).write("result.json", {"stages": {"RSR-1": str(rsr_dir(run, 1) / "checkpoint"),
                                                   "RPR-1": str(rpr_dir(run, 1) / "actor"),
                                                   "RSR-2": str(rsr_dir(run, 2) / "checkpoint"),
                                                   "RPR-2": str(rpr_dir(run, 2) / "actor")},
                                        "final_checkpoint": str(rpr_dir(run, 2) / "actor"), "cycles": 2})
    return ran


# ---------------------------------------------------------------- the commands its jobs run

def rewrite(run: str, cycle: int, init: str, model: str) -> None:
    """RSR-N up to its dataset, with the `gpu` profile's self-rewrite settings (the kit's environment)."""
    from rsi_lite.loop.profiles import profile
    from rsi_lite.rsr.stage import run_rsr
    from rsi_lite.tasks.suites import ensure_pool

    cfg = profile("gpu").rsr
    cfg.init, cfg.model, cfg.pool = init, model, str(ensure_pool(Path(run), profile("gpu").pool_size))
    run_rsr(Path(run), cycle, cfg, until="dataset")


def finish(run: str, cycle: int) -> None:
    """RSR-N's last step: the kit's stage finds the exported checkpoint and writes the funnel and DONE."""
    from rsi_lite.rsr.stage import run_rsr

    run_rsr(Path(run), cycle)


def merge(verl_dir: str, target: str) -> None:
    """verl's model merger on the newest checkpoint's actor (a LoRA actor: its adapter, in target/lora_adapter)."""
    subprocess.run([sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp", "--local_dir",
                    str(latest_step(verl_dir) / "actor"), "--target_dir", target], check=True)


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    steps = {"rewrite": lambda a: rewrite(a[0], int(a[1]), a[2], a[3]), "finish": lambda a: finish(a[0], int(a[1])),
             "merge": lambda a: merge(a[0], a[1])}
    if args and args[0] in steps:
        return steps[args[0]](args[1:])
    ap = argparse.ArgumentParser(prog="python -m scale_up.cycle", description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--launcher", choices=["local", "slurm"], default="local")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--nnodes", type=int, default=4)
    ap.add_argument("--dry-run", action="store_true", help="print the jobs, run nothing")
    ap.add_argument("overrides", nargs="*", help="Hydra overrides for every verl PPO job")
    a = ap.parse_args(args)
    cfg = CycleConfig(run=a.run, model=a.model, launcher=a.launcher, steps=a.steps, nnodes=a.nnodes,
                      overrides=list(a.overrides))
    if a.dry_run:
        for job in plan_jobs(cfg):
            print(job.describe())
        return
    start(cfg)


if __name__ == "__main__":
    main()
