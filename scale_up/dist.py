"""The distributed pieces the entry points share: process group, FSDP2 sharding, full state dicts.

Everything else (losses, advantages, the SFT loop, the PPO update, the rollout engine) is
`rsi_lite`'s own code, called unchanged on each rank's share of the batch.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist

_OWN_GROUP = False


def init() -> tuple[int, int]:
    """(rank, world): from a process group someone else formed (Ray Train), or from torchrun's environment,
    forming the group when world > 1 (nccl on GPUs, else gloo)."""
    global _OWN_GROUP
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    world, rank = int(os.environ.get("WORLD_SIZE", "1")), int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
        _OWN_GROUP = True
    return rank, world


def finish(world: int) -> None:
    if world > 1 and dist.is_initialized():
        dist.barrier()
        if _OWN_GROUP:
            dist.destroy_process_group()


def leave(world: int, code: int = 0) -> None:
    """End a rank that has finished its work and written its outputs, without the interpreter's teardown.

    Once a gloo group has run FSDP2's collectives, that teardown aborts now and then ("terminate called
    without an active exception", SIGABRT with no Python frame left: a C++ worker thread destroyed while
    still joinable), even after `destroy_process_group`. It hit about one torchrun in 15 on 2 CPU cores,
    and torchrun then reports the whole job failed. Every file is closed by now, so nothing is lost;
    one process (world 1) exits normally."""
    if world > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def decoder_layers(model):
    """The transformer blocks of a (peft-wrapped) causal LM: Llama, Qwen, Mistral and kin keep them here."""
    inner = model.base_model.model if hasattr(model, "base_model") and hasattr(model.base_model, "model") else model
    return inner.model.layers


def mixed_precision(dtype: str):
    """FSDP2's precision for a policy of `PolicyConfig.dtype`: below float32, parameters are all-gathered and
    computed in that dtype (the float32 LoRA adapters and value head too) and gradients reduce-scattered in
    float32, so the sharded masters and the optimizer stay float32; float32: no casting."""
    from torch.distributed.fsdp import MixedPrecisionPolicy

    from rsi_lite.policy.model import torch_dtype

    if dtype == "float32":
        return MixedPrecisionPolicy()
    return MixedPrecisionPolicy(param_dtype=torch_dtype(dtype), reduce_dtype=torch.float32)


def shard(policy, world: int) -> None:
    """FSDP2: each decoder layer, then the whole model (and the value head, when there is a critic), sharded
    over a 1-D mesh of all ranks, in the precision of `policy.config.dtype` (`mixed_precision`). LoRA and
    critic adapters live inside the layers, so they shard with them."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cuda" if torch.cuda.is_available() else "cpu", (world,))
    mp = mixed_precision(getattr(policy.config, "dtype", "float32"))
    for layer in decoder_layers(policy.model):
        fully_shard(layer, mesh=mesh, mp_policy=mp)
    fully_shard(policy.model, mesh=mesh, mp_policy=mp)
    if getattr(policy, "value_head", None) is not None:
        fully_shard(policy.value_head, mesh=mesh, mp_policy=mp)


def full_state(module, world: int) -> dict:
    """The module's full state dict on CPU (a collective: every rank calls it; rank 0 gets the tensors)."""
    if world == 1:
        return {k: v.detach().cpu() for k, v in module.state_dict().items()}
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    return get_model_state_dict(module, options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def mean_over_ranks(x: float, world: int) -> float:
    if world == 1:
        return x
    t = torch.tensor([x], dtype=torch.float64, device="cuda" if torch.cuda.is_available() else "cpu")
    dist.all_reduce(t)
    return float(t.item() / world)


def equal_share(items: list, rank: int, world: int) -> list:
    """Rank r's items r, r + world, ...; the remainder of len(items) / world is left out, because FSDP2 needs
    every rank to take the same number of steps (a rank with one batch more would wait forever)."""
    n = len(items) // world * world
    return items[rank:n:world]
