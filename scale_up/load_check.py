"""Sharded loading, checked: what each rank holds and read, against one process.

    torchrun --nproc_per_node=2 -m scale_up.load_check load --model DIR --adapter A --critic C --out o.pt
    torchrun --nproc_per_node=2 -m scale_up.load_check meta --config scale_up/configs/qwen27b_32xh100.json --out m.json

`load`: `scale_up.sharded_load.load_sharded` over the ranks; rank 0 writes the gathered full state dicts
(model and value head), the logits and values of a fixed batch, and every rank's bytes read and peak memory,
for `tests/scale_up/test_scale_up.py` to compare with `rsi_lite`'s one-process loading.

`meta`: the plan's architecture (the model block of a `scale_up/configs/` file, as a Qwen2 config) with LoRA
actor and critic, built on the meta device and sharded in bfloat16: each rank's parameter bytes, the total, and
the process's peak memory, which stays far below the model's size because no weight is ever allocated.
"""

from __future__ import annotations

import argparse
import json
import resource
from pathlib import Path

import torch

from . import dist as D


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _gather(obj, world: int) -> list:
    if world == 1:
        return [obj]
    out = [None] * world
    torch.distributed.all_gather_object(out, obj)
    return out


def qwen_config(model: dict):
    """A plan's model block (`scale_up.plan.ModelSpec` fields) as the transformers config it describes."""
    from transformers import Qwen2Config

    return Qwen2Config(vocab_size=model["vocab"], hidden_size=model["hidden"], intermediate_size=model["intermediate"],
                       num_hidden_layers=model["layers"], num_attention_heads=model["heads"],
                       num_key_value_heads=model["kv_heads"], tie_word_embeddings=model.get("tied_embeddings", False),
                       max_position_embeddings=32768)


def meta(config: Path, rank: int, world: int) -> dict:
    from rsi_lite.policy.model import PolicyConfig

    from .sharded_load import build_on_meta, local_parameter_bytes

    spec = json.loads(Path(config).read_text())["model"]
    policy = build_on_meta(PolicyConfig(dtype="bfloat16"), critic="", model_config=qwen_config(spec))
    total = local_parameter_bytes(policy.model) + local_parameter_bytes(policy.value_head)
    params = sum(p.numel() for n, p in policy.model.named_parameters() if ".lora_" not in n)
    if world > 1:
        D.shard(policy, world)
    mine = local_parameter_bytes(policy.model) + local_parameter_bytes(policy.value_head)
    on_meta = all(p.to_local().is_meta if hasattr(p, "to_local") else p.is_meta for p in policy.model.parameters())
    rows = _gather({"rank": rank, "local_bytes": mine, "peak_rss_bytes": _peak_rss_bytes(), "all_on_meta": on_meta},
                   world)
    return {"world": world, "total_bytes": total, "base_parameters": params, "ranks": rows}


def load(model: str, adapter: str | None, critic: str | None, rank: int, world: int, dtype: str) -> dict:
    from rsi_lite.policy.critic import token_logprobs, values
    from rsi_lite.policy.model import PolicyConfig

    from .sharded_load import load_sharded, local_parameter_bytes

    policy = load_sharded(PolicyConfig(model=model, dtype=dtype), world, adapter=adapter, critic=critic, rank=rank)
    ids = torch.arange(3, 3 + 2 * 12).reshape(2, 12) % policy.model.config.vocab_size
    with torch.no_grad():
        lp = token_logprobs(policy, ids, torch.ones_like(ids))
        v = values(policy, ids, torch.ones_like(ids)) if critic is not None else None
    state = D.full_state(policy.model, world)
    head = D.full_state(policy.value_head, world) if critic is not None else None
    rows = _gather({"rank": rank, "bytes_read": policy.bytes_read, "local_bytes": local_parameter_bytes(policy.model),
                    "peak_rss_bytes": _peak_rss_bytes()}, world)
    return {"world": world, "state": state, "head": head, "logprobs": lp.float(), "values": v, "ranks": rows}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a1 = sub.add_parser("load", help="load sharded, gather, write the full state and outputs (rank 0)")
    a1.add_argument("--model", required=True)
    a1.add_argument("--adapter")
    a1.add_argument("--critic", help="a saved critic directory, or '' for a fresh one")
    a1.add_argument("--dtype", default="float32")
    a1.add_argument("--out", required=True)
    a2 = sub.add_parser("meta", help="the plan's architecture on the meta device, sharded: bytes per rank")
    a2.add_argument("--config", default=str(Path(__file__).parent / "configs" / "qwen27b_32xh100.json"))
    a2.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    rank, world = D.init()
    try:
        if a.cmd == "load":
            result = load(a.model, a.adapter, a.critic, rank, world, a.dtype)
        else:
            result = meta(Path(a.config), rank, world)
    finally:
        D.finish(world)
    if rank == 0:
        if a.cmd == "load":
            torch.save(result, a.out)
        else:
            Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
            print(json.dumps(result))
    D.leave(world)


if __name__ == "__main__":
    main()
