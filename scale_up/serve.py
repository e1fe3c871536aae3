"""verl's standalone rollout replicas serving one actor to the kit's own episodes (verl's environment): the
self-rewrite's discovery and re-solves and an evaluation decode on every GPU of the cluster, while the kit's code
(harness, sandbox, verifier, runbooks, review) runs unchanged on the driver node and reaches the replicas through
`rsi_lite.policy.gen.remote_engine` (vLLM's OpenAI-compatible completions API, which verl's vLLM server is).

    python -m scale_up.serve --init RUN/rpr-1/actor --model BASE_DIR --out RUN/rsr-2/serve [--nnodes 4 ...]

1. The actor as one model directory: `base` is the base model's; an adapter is merged into the base once
   (`merged_actor`, peft's `merge_and_unload`, bf16, written beside `--out` and renamed when whole): vLLM then
   serves plain weights, no LoRA slot.
2. The rollout section of `configs/rsi_27b.yaml` (`serve_config`): weights read from disk (`load_format: auto`;
   in training verl loads dummy weights and syncs the trainer's), the context and tensor parallel size of the
   training runs, every GPU of `--nnodes` x `--gpus-per-node` in replicas of that size.
3. The replicas started as verl's own `trainer/main_generation_server.py` starts them
   (`get_rollout_replica_class(...)(...).init_standalone()`), their addresses written atomically to
   OUT/servers.json ({"servers": [host:port, ...], "served_model": the name requests use, "init", "model"}).
4. It then waits; the kit job that started it (`scale_up.kit_jobs.serving`) stops it when its episodes are done.

Needs GPUs and vLLM: on the kit's CPU machine only steps 1 and 2 run (tests/scale_up/test_serve.py), and the
kit's side is tested against the kit's own server instead (tests/policy/test_remote_engine.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from .settings import CONFIGS


def merged_actor(init: str, model: str, out: str | Path) -> str:
    """The actor `init` ('base', or a saved LoRA adapter directory) as one model directory: the base's own for
    'base', else the adapter merged into the base in bf16 at OUT/merged (made once; a directory without
    config.json is an unfinished merge and is made again)."""
    if init == "base":
        return str(model)
    dest = Path(out) / "merged"
    if (dest / "config.json").is_file():
        return str(dest)
    if not (Path(init) / "adapter_config.json").is_file():
        raise FileNotFoundError(f"{Path(init) / 'adapter_config.json'}: missing (--init is 'base' or an adapter)")
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = AutoModelForCausalLM.from_pretrained(model, dtype=torch.bfloat16)
    merged = PeftModel.from_pretrained(base, str(init)).merge_and_unload()
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    merged.save_pretrained(tmp)
    AutoTokenizer.from_pretrained(model).save_pretrained(tmp)
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    return str(dest)


def serve_config(model_dir: str, *, nnodes: int, gpus_per_node: int, overrides: list[str] = ()):
    """The composed verl config whose `actor_rollout_ref.rollout` and `.model` the replicas are built from: the
    training config's rollout settings, the weights read from `model_dir`, the cluster's size."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose(config_name="rsi_27b", overrides=[
            f"actor_rollout_ref.model.path={model_dir}", "actor_rollout_ref.rollout.load_format=auto",
            f"trainer.nnodes={nnodes}", f"trainer.n_gpus_per_node={gpus_per_node}", *overrides])


def replicas(config) -> int:
    """How many replicas the cluster holds: its GPUs over the rollout's tensor parallel size."""
    tp = config.actor_rollout_ref.rollout.tensor_model_parallel_size
    gpus = config.trainer.n_gpus_per_node * config.trainer.nnodes
    if gpus % tp:
        raise ValueError(f"{gpus} GPUs do not split into replicas of tensor_model_parallel_size {tp}")
    return gpus // tp


async def start_replicas(config) -> list[str]:
    """Start the standalone replicas (as verl's `main_generation_server.start_server`); their host:port."""
    import asyncio

    from verl.workers.rollout.replica import get_rollout_replica_class

    rollout = config.actor_rollout_ref.rollout
    cls = get_rollout_replica_class(rollout.name)
    servers = [cls(replica_rank=r, config=rollout, model_config=config.actor_rollout_ref.model,
                   gpus_per_node=config.trainer.n_gpus_per_node) for r in range(replicas(config))]
    await asyncio.gather(*[s.init_standalone() for s in servers])
    return [str(s.server_address) for s in servers]


def write_servers(out: str | Path, servers: list[str], served_model: str, init: str, model: str) -> Path:
    """OUT/servers.json, written whole (a temp file renamed): what `remote_engine.remote_policy` is given."""
    path = Path(out) / "servers.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"servers": servers, "served_model": served_model, "init": init, "model": model},
                              indent=2))
    os.replace(tmp, path)
    return path


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m scale_up.serve", description=__doc__.split("\n\n")[0])
    p.add_argument("--init", required=True, help="'base' or the actor's adapter directory")
    p.add_argument("--model", required=True, help="the base model's directory")
    p.add_argument("--out", required=True, help="where servers.json (and a merged actor) are written")
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("overrides", nargs="*", help="further Hydra overrides of configs/rsi_27b.yaml")
    a = p.parse_args(argv)
    import asyncio

    import ray

    model_dir = merged_actor(a.init, a.model, a.out)
    config = serve_config(model_dir, nnodes=a.nnodes, gpus_per_node=a.gpus_per_node, overrides=a.overrides)
    ray.init(address=os.environ.get("RAY_ADDRESS") or None)
    servers = asyncio.run(start_replicas(config))
    write_servers(a.out, servers, model_dir, a.init, a.model)  # vLLM serves a model under its path
    print(f"serving {a.init} on {len(servers)} replica(s): {', '.join(servers)}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
