"""Sharded training entry points: the RSR stage's SFT and one RPR step's PPO update, under torchrun.

    torchrun --nproc_per_node=8 --nnodes=4 ... -m scale_up.train sft --dir DIR --cycle 1
    torchrun ... -m scale_up.train ppo --dir DIR --stage rpr-1 --step 7

They read and write the same stage files as the laptop (`rsi_lite.rsr.stage`, `rsi_lite.rpr`):
`sft` trains on DIR/rsr-N/dataset.jsonl (written by `scale_up.generate rsr`) and writes
checkpoint/, sft.json and metrics.jsonl, after which `rsi-lite rsr --run DIR --cycle N`
finishes the stage without loading a model. `ppo` is `rsi_lite.rpr.stage.update_step`, the function the
laptop's `run_rpr` calls: it updates on DIR/rpr-N/step-K/rollouts.jsonl (written by
`scale_up.generate rpr`, i.e. `rpr.roll_out_step`) from step K-1's actor, critic and optimizer
shards and writes step K's files (actor/, critic/, optim-rank*.pt, world.json, metrics.json,
trajectories.jsonl, DONE; resuming needs the same world size).

Each rank loads its shards of the model (`scale_up.sharded_load`: built on the meta device, sharded,
then each rank reads only its rows of the safetensors), takes its equal share of the examples or
episodes, and runs `rsi_lite.rsr.sft.train_sft` / `rsi_lite.rpr.update.update` unchanged; FSDP2
averages gradients across ranks, in the precision of the stage config's `dtype`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from rsi_lite.records import read_json
from rsi_lite.rundir import StageDir, rsr_dir

from . import dist as D


def _actor(cfg, init: str, world: int, critic: str | None = None):
    """The stage's actor (and critic: None for none, "" for a fresh one): sharded loading over the ranks
    (`scale_up.sharded_load`: no rank reads the whole base), the laptop's loading for one process."""
    from rsi_lite.policy.actor import load_actor
    from rsi_lite.policy.critic import add_critic
    from rsi_lite.policy.model import PolicyConfig

    from .sharded_load import load_sharded

    if world > 1:
        return load_sharded(PolicyConfig(model=cfg.model, dtype=cfg.dtype), world,
                            adapter=None if init == "base" else init, critic=critic)
    policy = load_actor(init, model=cfg.model, dtype=cfg.dtype)
    return add_critic(policy, path=critic or None) if critic is not None else policy


def sft(run: Path, cycle: int, rank: int, world: int) -> None:
    from rsi_lite.policy.actor import save_actor
    from rsi_lite.records import read_jsonl, write_json_atomic, write_jsonl_atomic
    from rsi_lite.rsr.clean import Example
    from rsi_lite.rsr.config import RSRConfig
    from rsi_lite.rsr.sft import train_sft
    d = rsr_dir(run, cycle).path
    if (d / "checkpoint" / "adapter_config.json").is_file():
        if rank == 0:
            print(f"{d}/checkpoint exists: nothing to train")
        return
    if not (d / "dataset.jsonl").is_file():
        raise FileNotFoundError(f"{d}/dataset.jsonl: missing; run `python -m scale_up.generate rsr --dir {run} "
                                f"--cycle {cycle}` first")
    cfg = RSRConfig.from_dict(read_json(d / "config.json"))
    examples = [Example.from_dict(r) for r in read_jsonl(d / "dataset.jsonl")]
    kept = [e for e in examples if len(e.input_ids) <= cfg.sft.max_len and sum(e.loss_mask)]
    # fewer examples than ranks: every rank trains on none (as the laptop does with an empty dataset)
    policy = _actor(cfg, cfg.init, world)
    log = d / f"metrics.rank{rank}.jsonl"
    # the kit's loop under FSDP2: TRL's trainer would wrap the sharded model again (rsi_lite.rsr.sft)
    summary = train_sft(policy, D.equal_share(kept, rank, world), replace(cfg.sft, loop="kit"), metrics_path=log)
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    losses = [D.mean_over_ranks(r["losses/sft"], world) for r in rows]
    state = D.full_state(policy.model, world)
    if rank == 0:
        for r, loss in zip(rows, losses):
            r["losses/sft"] = round(loss, 5)
        write_jsonl_atomic(d / "metrics.jsonl", rows)
        summary.update({"examples": len(kept), "left_out_too_long": len(examples) - len(kept), "world": world,
                        "left_out_for_equal_shares": len(kept) % world,
                        "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None})
        write_json_atomic(d / "sft.json", summary)
        save_actor(policy, d / "checkpoint", state_dict=state)
    log.unlink(missing_ok=True)


def ppo(run: Path, stage: str, k: int, rank: int, world: int) -> None:
    """Step k's update by `rsi_lite.rpr.stage.update_step`, the laptop's own, on this rank's share of the batch."""
    from rsi_lite.rpr.config import RPRConfig
    from rsi_lite.rpr.stage import load_optimizers, make_optimizers, update_step

    d = StageDir(Path(run) / stage)
    cfg = RPRConfig.from_dict(d.read("config.json"))
    step, prev = d.step(k), (d.step(k - 1) if k else None)
    if step.done:
        return
    if not (step / "rollouts.jsonl").is_file():
        raise FileNotFoundError(f"{step}/rollouts.jsonl: missing; run `python -m scale_up.generate rpr --dir {run} "
                                f"--stage {stage} --step {k}` first")
    if prev is not None and not prev.done:
        raise FileNotFoundError(f"{prev}/DONE: missing; steps run in order")
    policy = _actor(cfg, str(prev / "actor") if prev else cfg.init, world,
                    critic=str(prev / "critic") if prev else (cfg.critic_from or ""))
    optims = make_optimizers(policy, cfg)
    if prev is not None:
        load_optimizers(optims, prev, rank, world)
    update_step(policy, optims, cfg, d, k, rank=rank, world=world, share=lambda xs: D.equal_share(xs, rank, world),
                reduce=lambda x: D.mean_over_ranks(x, world), full_state=lambda m: D.full_state(m, world))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sft", help="masked SFT of the actor on DIR/rsr-N/dataset.jsonl, sharded")
    s.add_argument("--dir", required=True, help="the run directory")
    s.add_argument("--cycle", type=int, required=True)
    p = sub.add_parser("ppo", help="one PPO (or critic-only) update on DIR/STAGE/step-K/rollouts.jsonl, sharded")
    p.add_argument("--dir", required=True, help="the run directory")
    p.add_argument("--stage", required=True, help="rpr-1, rpr-2, ...")
    p.add_argument("--step", type=int, required=True)
    a = ap.parse_args(argv)
    rank, world = D.init()
    try:
        if a.cmd == "sft":
            sft(Path(a.dir), a.cycle, rank, world)
        else:
            ppo(Path(a.dir), a.stage, a.step, rank, world)
    finally:
        D.finish(world)
    D.leave(world)


if __name__ == "__main__":
    main()
