"""RETIRED with the home-made path (issue 48: scale_up/ now runs on verl, scale_up/README.md); kept only while
notebooks/07_scale_up.ipynb imports `scale_profile` and `SlurmLauncher` from it. The modules it launched are gone.

The five-phase loop at scale: `rsi_lite.loop` decides, Slurm / Ray / torchrun run the stages.

    sbatch scale_up/launch/slurm.sbatch                   # 4 nodes x 8 GPUs; see that file
    bash scale_up/launch/ray_job.sh                       # on a running Ray cluster
    python -m scale_up.launch --run DIR --launcher local --nproc 2 --profile smoke   # this machine (CPU test)

The driver is `rsi_lite.loop.phases.start` itself: the same phases, val-only checkpoint selection,
critic inheritance, controls, seeds, cost, resume and report. Only the three stage calls
change (`DistributedStages` replaces `loop.LocalStages`):

    RSR  generate rsr (discovery -> dataset.jsonl, one node)  ->  train sft (all GPUs)  ->  finish (no model)
    RPR  per step K: generate rpr (the step's batch, split over the nodes) -> merge -> train ppo (all GPUs)
         then finish (metrics.jsonl, actor/, critic/, summary.json, DONE; no model)
    eval generate eval (one node)

Every command reads and writes the laptop's stage files, so a run killed anywhere resumes
with the same command (`--resume`), and `rsi-lite report DIR` works on it unchanged.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

from rsi_lite.loop.phases import EvalConfig, Profile, profile, start
from rsi_lite.records import read_json, write_json_atomic
from rsi_lite.rollout.trajectory import read_trajectories, write_trajectories
from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.stage import run_rpr, schedule
from rsi_lite.rsr.config import RSRConfig
from rsi_lite.rsr.stage import run_rsr
from rsi_lite.rundir import StageDir, rpr_dir, rsr_dir


class Launcher:
    """How a command runs: `train(argv)` on every GPU of every node, `generate(argv, shards)` on `shards`
    nodes at once (each process gets SHARD / SHARDS), `generate(argv)` on one node."""

    def __init__(self, nodes: int = 1, gpus: int = 8, vllm: bool = True):
        self.nodes, self.gpus, self.vllm = nodes, gpus, vllm

    def gen_prefix(self) -> list[str]:
        return [sys.executable, "-m", "scale_up.generate"] + (["--vllm", "--tp", str(self.gpus)] if self.vllm else [])

    def run(self, cmd: list[str], env: dict | None = None) -> None:
        print("+", shlex.join(cmd), flush=True)
        subprocess.run(cmd, check=True, env={**os.environ, **(env or {})})


class LocalLauncher(Launcher):
    """This machine: torchrun --standalone with `gpus` processes (CPU processes over gloo where no GPU)."""

    def train(self, argv: list[str]) -> None:
        self.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={self.gpus}",
                  "-m", "scale_up.train"] + argv, env={"OMP_NUM_THREADS": "1"})

    def generate(self, argv: list[str], shards: int = 1) -> None:
        for i in range(shards):  # one machine: the shards one after another
            self.run(self.gen_prefix() + argv, env={"SHARD": str(i), "SHARDS": str(shards)})


class SlurmLauncher(Launcher):
    """Inside an allocation (`sbatch scale_up/jobs/slurm.sbatch`): srun steps on its nodes. `train_cmd` and
    `generate_cmd` return the command lines (notebook 07 prints them without a cluster)."""

    def __init__(self, nodes: int, gpus: int, vllm: bool = True, port: int = 29500, head: str | None = None):
        super().__init__(nodes, gpus, vllm)
        if head is None:
            head = subprocess.run(["scontrol", "show", "hostnames", os.environ["SLURM_JOB_NODELIST"]],
                                  check=True, capture_output=True, text=True).stdout.split()[0]
        self.head, self.port = head, port

    def train_cmd(self, argv: list[str]) -> list[str]:
        return (["srun", f"--nodes={self.nodes}", "--ntasks-per-node=1", f"--gpus-per-node={self.gpus}",
                 sys.executable, "-m", "torch.distributed.run", f"--nnodes={self.nodes}",
                 f"--nproc_per_node={self.gpus}", "--rdzv_backend=c10d", f"--rdzv_endpoint={self.head}:{self.port}",
                 f"--rdzv_id={os.environ.get('SLURM_JOB_ID', 'rsi-lite')}", "-m", "scale_up.train"] + argv)

    def generate_cmd(self, argv: list[str], shards: int = 1) -> list[str]:
        # srun gives each task SLURM_PROCID / SLURM_NTASKS, which generate reads as its shard
        return (["srun", f"--nodes={shards}", "--ntasks-per-node=1", f"--gpus-per-node={self.gpus}"]
                + self.gen_prefix() + argv)

    def train(self, argv: list[str]) -> None:
        self.run(self.train_cmd(argv))

    def generate(self, argv: list[str], shards: int = 1) -> None:
        self.run(self.generate_cmd(argv, shards))


class RayLauncher(Launcher):
    """On a Ray cluster (`ray job submit`): training through Ray Train's TorchTrainer (it forms the process
    group), generation as one Ray task per node with that node's GPUs."""

    def train(self, argv: list[str]) -> None:
        from ray.train import ScalingConfig
        from ray.train.torch import TorchTrainer

        def loop(config):
            from scale_up.train import main
            main(config["argv"])

        use_gpu = self.vllm
        TorchTrainer(loop, train_loop_config={"argv": argv},
                     scaling_config=ScalingConfig(num_workers=self.nodes * self.gpus, use_gpu=use_gpu)).fit()

    def generate(self, argv: list[str], shards: int = 1) -> None:
        import ray

        @ray.remote(num_gpus=self.gpus if self.vllm else 0)
        def one(i: int):
            env = {**os.environ, "SHARD": str(i), "SHARDS": str(shards)}
            subprocess.run(self.gen_prefix() + argv, check=True, env=env)

        ray.get([one.remote(i) for i in range(shards)])


class DistributedStages:
    """`loop.LocalStages`' three methods, as generation and training jobs over the same files."""

    def __init__(self, launcher: Launcher):
        self.l = launcher

    def rsr(self, run: Path, cycle: int, cfg: RSRConfig, progress: bool):
        d = rsr_dir(run, cycle)
        if not d.done:
            d.path.mkdir(parents=True, exist_ok=True)
            d.config(cfg, RSRConfig)
            self.l.generate(["rsr", "--dir", str(run), "--cycle", str(cycle)])
            self.l.train(["sft", "--dir", str(run), "--cycle", str(cycle)])
        return run_rsr(run, cycle)  # every step's file exists now: the funnel and DONE, no model loaded

    def rpr(self, run: Path, cycle: int, cfg: RPRConfig, name: str, progress: bool):
        d = rpr_dir(run, cycle, name)
        if not d.done:
            d.path.mkdir(parents=True, exist_ok=True)
            # probes run on the laptop path only: here the frontier rule reads the steps' own verdicts
            cfg = d.config(replace(cfg, probe_samples=0), RPRConfig)
            for k in range(len(schedule(cfg))):
                step = d.step(k)
                if step.done:
                    continue
                if not (step / "rollouts.jsonl").is_file():
                    shards = min(self.l.nodes, cfg.batch_tasks)
                    self.l.generate(["rpr", "--dir", str(run), "--stage", name, "--step", str(k)], shards=shards)
                    merge_shards(step.path, shards)
                self.l.train(["ppo", "--dir", str(run), "--stage", name, "--step", str(k)])
        return run_rpr(run, cycle, name=name)  # assembles the finished steps; no model loaded

    def eval(self, d: Path, checkpoint: str, cfg: EvalConfig, model: str, progress: bool):
        stage = StageDir(d)
        if not stage.done:
            d.mkdir(parents=True, exist_ok=True)
            stage.write("eval_config.json", asdict(cfg))
            self.l.generate(["eval", "--out", str(d), "--checkpoint", checkpoint, "--model", model])
        return stage.read("results.json")


def merge_shards(step: Path, shards: int) -> None:
    """rollouts.part-I-of-N.jsonl (part I holds the batch's items I, I+N, ...) -> rollouts.jsonl in batch order."""
    if shards == 1 and (step / "rollouts.jsonl").is_file():
        return
    parts = [read_trajectories(step / f"rollouts.part-{i}-of-{shards}.jsonl") for i in range(shards)]
    merged = [parts[i][j] for j in range(max(map(len, parts))) for i in range(shards) if j < len(parts[i])]
    infos = [read_json(step / f"rollout.part-{i}-of-{shards}.json") for i in range(shards)]
    write_json_atomic(step / "rollout.json", {**infos[0], "rollout_s": max(x["rollout_s"] for x in infos),
                                              "shards": shards})
    write_trajectories(merged, step / "rollouts.jsonl")


def scale_profile(plan_config: Path, model: str) -> Profile:
    """The `gpu` profile with a scale_up plan config's `rsr` and `rpr` blocks laid over it (the paper's
    hyper-parameters in `scale_up/configs/`): the stage configs `scale_up.plan` computes its figures from."""
    from .plan import Plan

    plan = Plan.load(plan_config)
    p = profile("gpu")
    p.model = model
    p.rsr, p.rpr = plan.stage_configs()
    if plan.rpr2_actor_lr is not None:
        p.rpr2_actor_lr = plan.rpr2_actor_lr
    return p


def build_parser() -> argparse.ArgumentParser:
    """The launcher's flags (the job scripts' command lines are parsed with it in the tests)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True)
    ap.add_argument("--launcher", choices=["local", "slurm", "ray"], default="local")
    ap.add_argument("--config", help="a scale_up plan config (the paper's hyper-parameters); with --model")
    ap.add_argument("--model", default=os.environ.get("RSI_LITE_MODEL", ""), help="local HF model directory")
    ap.add_argument("--profile", default="gpu", help="a loop profile, when no --config (smoke for the CPU test)")
    ap.add_argument("--nodes", type=int, default=int(os.environ.get("SLURM_NNODES", "1")))
    ap.add_argument("--nproc", type=int, default=8, help="GPUs (training processes) per node")
    ap.add_argument("--no-vllm", action="store_true", help="generate with transformers (CPU test)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--control", action="append", default=[], choices=["direct-ppo", "critic-reset", "reward-fdr"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    return ap


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    cls = {"local": LocalLauncher, "slurm": SlurmLauncher, "ray": RayLauncher}[a.launcher]
    launcher = cls(a.nodes, a.nproc, vllm=not a.no_vllm)
    if a.launcher == "ray":
        import ray

        ray.init(address=os.environ.get("RAY_ADDRESS", "auto"))
    p = scale_profile(Path(a.config), a.model) if a.config else profile(a.profile)
    if a.model:
        p.model = a.model
    start(Path(a.run), p.name, resume=a.resume, controls=a.control, seeds=a.seeds, p=p,
          stages=DistributedStages(launcher), log=lambda m: print(m, flush=True))
    from rsi_lite.report.write import stage_table, write_report

    print(stage_table(write_report(Path(a.run))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
