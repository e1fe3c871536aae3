"""Generation entry points: the rollout side of each stage, one process per node (vLLM on GPUs).

    python -m scale_up.generate rsr  --dir DIR --cycle 1 [--vllm --tp 8]       # discovery ... dataset.jsonl
    python -m scale_up.generate rpr  --dir DIR --stage rpr-1 --step 7 [--vllm]  # step 7's rollouts
    python -m scale_up.generate eval --out DIR/eval-rsr-1 --checkpoint C [--vllm]   # reads eval_config.json there

Each is the laptop's own stage code with a different policy object: `rsi_lite.rsr.stage.run_rsr`
up to the dataset, the batch `rsi_lite.rpr.stage.run_rpr` would roll out at step K (same tasks,
same seeds, `rpr.step_jobs`), and `rsi_lite.eval.evaluate.evaluate`. With `--vllm` the policy is
a `VLLMPolicy` (base model on `--tp` GPUs, the actor as a LoRA adapter); without it, the
kit's transformers model (any device; this is how the CPU test runs it). Harnesses, sandboxes,
verifier and rewards are unchanged; sandboxes run on this node's CPUs (`--workers`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rsi_lite.rundir import StageDir, rsr_dir


def make_policy(model: str, adapter: str | None, *, use_vllm: bool, tp: int = 1):
    """The actor for generation: a VLLMPolicy, or the kit's transformers policy."""
    if use_vllm:
        from transformers import AutoTokenizer

        from rsi_lite.policy.gen.vllm_engine import VLLMPolicy, vllm_engine
        from rsi_lite.policy.model import resolve_model

        path = resolve_model(model)
        return VLLMPolicy(AutoTokenizer.from_pretrained(path), vllm_engine(path, tensor_parallel=tp), adapter)
    from rsi_lite.policy.actor import load_actor

    return load_actor(adapter or "base", model=model)


def rsr(run: Path, cycle: int, use_vllm: bool, tp: int) -> None:
    from rsi_lite.rsr.config import RSRConfig
    from rsi_lite.rsr.stage import run_rsr

    cfg = RSRConfig.from_dict(rsr_dir(run, cycle).read("config.json"))
    policy = make_policy(cfg.model, None if cfg.init == "base" else cfg.init, use_vllm=use_vllm, tp=tp)
    run_rsr(run, cycle, policy=policy, progress=True, until="dataset")


def rpr(run: Path, stage: str, k: int, use_vllm: bool, tp: int, workers: int | None) -> None:
    """Step k's rollouts (this node's shard of the batch) by `rsi_lite.rpr.stage.roll_out_step`, the laptop's own."""
    from rsi_lite.algos.rewards import family_divisors
    from rsi_lite.rollout.engine import RolloutConfig
    from rsi_lite.rpr.config import RPRConfig
    from rsi_lite.rpr.stage import roll_out_step, step_rollout
    from rsi_lite.tasks import family_check_counts
    from rsi_lite.tasks.suites import pool_tasks

    d = StageDir(Path(run) / stage)
    cfg = RPRConfig.from_dict(d.read("config.json"))
    step, prev = d.step(k), d.step(k - 1)
    if (step / "rollouts.jsonl").is_file():
        print(f"{step}/rollouts.jsonl exists")
        return
    if k and not prev.done:
        raise FileNotFoundError(f"{prev}/DONE: missing; train step {k - 1} first (python -m scale_up.train ppo ...)")
    adapter = str(prev / "actor") if k else (None if cfg.init == "base" else cfg.init)
    tasks = pool_tasks(run, cfg)
    # several nodes at once (srun or the Ray launcher): this process rolls out items shard, shard + shards, ...
    shard = int(os.environ.get("SHARD", os.environ.get("SLURM_PROCID", "0")))
    shards = int(os.environ.get("SHARDS", os.environ.get("SLURM_NTASKS", "1")))
    rc = step_rollout(cfg, k)
    if workers:
        rc = RolloutConfig(**{**rc.to_dict(), "workers": workers})
    policy = make_policy(cfg.model, adapter, use_vllm=use_vllm, tp=tp)
    roll_out_step(policy, cfg, tasks, d.path, k, family_divisors(family_check_counts(tasks)), name=stage, rollout=rc,
                  shard=shard, shards=shards, progress=True)


def evaluate(out: Path, checkpoint: str, model: str, use_vllm: bool, tp: int) -> None:
    from rsi_lite.eval.evaluate import evaluate as run_eval
    from rsi_lite.loop.phases import EvalConfig

    stage = StageDir(out)
    cfg = EvalConfig.from_dict(stage.read("eval_config.json"))
    if stage.done:
        return
    rc = cfg.rollout
    policy = make_policy(model, None if checkpoint == "base" else checkpoint, use_vllm=use_vllm, tp=tp)
    run_eval(policy, cfg.suites, out, k=cfg.k, rollout=rc, checkpoint=checkpoint, limit=cfg.limit, spread=True,
             progress=True)
    stage.mark_done()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm", action="store_true", help="generate with vLLM (GPUs); default: transformers")
    ap.add_argument("--tp", type=int, default=8, help="vLLM tensor parallelism (GPUs of this node)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("rsr", help="discovery -> runbooks -> review -> re-solves -> dataset.jsonl")
    s.add_argument("--dir", required=True, help="the run directory")
    s.add_argument("--cycle", type=int, required=True)
    r = sub.add_parser("rpr", help="step K's rollouts -> DIR/STAGE/step-K/rollouts.jsonl")
    r.add_argument("--dir", required=True, help="the run directory")
    r.add_argument("--stage", required=True)
    r.add_argument("--step", type=int, required=True)
    r.add_argument("--workers", type=int, help="sandboxes at once on this node")
    e = sub.add_parser("eval", help="a checkpoint on the suites of OUT/eval_config.json -> OUT/results.json")
    e.add_argument("--out", required=True)
    e.add_argument("--checkpoint", required=True)
    e.add_argument("--model", default="smollm2-135m")
    a = ap.parse_args(argv)
    if a.cmd == "rsr":
        rsr(Path(a.dir), a.cycle, a.vllm, a.tp)
    elif a.cmd == "rpr":
        rpr(Path(a.dir), a.stage, a.step, a.vllm, a.tp, a.workers)
    else:
        evaluate(Path(a.out), a.checkpoint, a.model, a.vllm, a.tp)


if __name__ == "__main__":
    main()
