"""Sharded loading: the model built on the meta device, sharded with FSDP2, then each rank reads only its shards.

    policy = load_sharded(PolicyConfig(model=DIR, dtype="bfloat16"), world, adapter=..., critic=...)

No rank ever holds the whole model, on the GPU or in host memory:
1. the base model and its LoRA adapters are built on the meta device (parameters without storage; the
   small buffers, e.g. rotary frequencies, are computed for real), the value head for real (it is tiny);
2. `scale_up.dist.shard` applies `fully_shard` per decoder layer, then to the model and the value head:
   every parameter becomes a DTensor whose local shard is a slice of rows (FSDP2 shards dim 0: rank r holds
   rows [r * ceil(n / world), (r + 1) * ceil(n / world)) of a tensor with n rows, clipped to n);
3. `to_empty` allocates each rank's shards only, and each shard is filled from its rows of the checkpoint:
   the base model's safetensors (one file or an index of several, read slice by slice with
   `safe_open(...).get_slice`), the actor and critic adapters' `adapter_model.safetensors` when given,
   `value_head.pt`. A fresh adapter is initialised as peft does (A Kaiming-uniform, B zero), from a
   generator seeded by the parameter's name, so every rank computes the same full tensor and keeps its rows.

`bytes_read` on the returned policy says how much of the checkpoint this rank read: about 1 / world of it.
Supported: LoRA on a float32, bfloat16 or float16 base (`PolicyConfig.quantization == "lora"`). A 4-bit base
is quantized by bitsandbytes at load time, which needs the whole weight on one device: `load_sharded` refuses
it (`scale_up/README.md` says which combinations run where).
"""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path

import torch

from . import dist as D


class _Checkpoint:
    """The tensors of a safetensors checkpoint (one file or sharded with an index), read by row slices."""

    def __init__(self, files: list[Path]):
        from safetensors import safe_open

        self.handles, self.where = [], {}
        for f in files:
            h = safe_open(str(f), "pt")
            self.handles.append(h)
            for k in h.keys():
                self.where[k] = h
        self.bytes_read = 0

    @classmethod
    def of_model(cls, path: Path) -> "_Checkpoint":
        index = path / "model.safetensors.index.json"
        if index.is_file():
            files = sorted({path / f for f in json.loads(index.read_text())["weight_map"].values()})
        else:
            files = sorted(path.glob("*.safetensors"))
        if not files:
            raise FileNotFoundError(f"{path}: no *.safetensors weights (sharded loading reads safetensors only)")
        return cls(files)

    def rows(self, key: str, start: int, n: int) -> torch.Tensor:
        if key not in self.where:
            raise KeyError(key)
        part = self.where[key].get_slice(key)[start:start + n]
        self.bytes_read += part.numel() * part.element_size()
        return part


def _base_key(name: str) -> str:
    """A parameter of the peft-wrapped model -> its key in the base model's checkpoint."""
    return name.removeprefix("base_model.model.").replace(".base_layer.", ".")


def _adapter_key(name: str, adapter: str) -> str:
    """A LoRA parameter -> its key in peft's adapter_model.safetensors (saved without the adapter's name)."""
    return name.replace(f".{adapter}.", ".")


def _fresh_lora(name: str, shape, seed: int) -> torch.Tensor:
    """What peft's default init gives a LoRA weight (A: Kaiming-uniform with a = sqrt(5); B: zero), from a
    generator seeded by the name: the same full tensor on every rank."""
    if ".lora_B." in name:
        return torch.zeros(shape)
    g = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(name.encode()))
    fan_in = shape[1]
    bound = math.sqrt(6 / ((1 + 5) * fan_in))  # kaiming_uniform_(a=sqrt(5)): gain sqrt(2 / (1 + a^2))
    return torch.rand(shape, generator=g) * 2 * bound - bound


def _rows_of(param, rank: int, world: int) -> tuple[torch.Tensor, int, int]:
    """(local tensor, first row, rows) of an FSDP2-sharded parameter on this rank."""
    from torch.distributed.tensor import DTensor, Shard

    if not isinstance(param, DTensor):  # world 1: the whole tensor
        return param.data, 0, param.shape[0] if param.dim() else 1
    if param.placements != (Shard(0),):
        raise ValueError(f"expected FSDP2's Shard(0) placement, got {param.placements}")
    local = param.to_local()
    chunk = math.ceil(param.shape[0] / world)
    return local, min(rank * chunk, param.shape[0]), local.shape[0]


def build_on_meta(cfg, *, adapter: str | None = None, critic: str | None = None, model_config=None):
    """The policy's structure with parameters on the meta device (no storage) and real buffers and value
    head: what `load_sharded` shards before reading a byte of weights. `model_config`: a transformers config
    to build instead of `cfg.model`'s (no files, no tokenizer: `load_check meta` builds the plan's 27B so)."""
    from accelerate import init_empty_weights
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    from rsi_lite.policy.critic import CRITIC
    from rsi_lite.policy.model import Policy, policy_tokenizer, quiet_peft, resolve_model, torch_dtype

    if cfg.quantization != "lora":
        raise ValueError(f"sharded loading supports PolicyConfig.quantization='lora', got {cfg.quantization!r} "
                         "(a 4-bit base is quantized whole on one device at load time; see scale_up/README.md)")
    path = None if model_config is not None else resolve_model(cfg.model)
    tok = policy_tokenizer(path) if path else None
    with init_empty_weights(include_buffers=False):
        model = AutoModelForCausalLM.from_config(model_config or AutoConfig.from_pretrained(path),
                                                 dtype=torch_dtype(cfg.dtype))
    # tied embeddings (SmolLM2's) as one parameter, sharded and loaded once: tied here, because accelerate's
    # meta context re-creates a parameter at every registration and so unties what the constructor tied
    model.tie_weights()
    fresh = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                       target_modules=cfg.target_modules, task_type="CAUSAL_LM")
    with quiet_peft(), init_empty_weights(include_buffers=False):
        model = get_peft_model(model, LoraConfig.from_pretrained(adapter) if adapter else fresh, adapter_name="actor")
        if critic is not None:
            model.add_adapter(CRITIC, LoraConfig.from_pretrained(critic) if critic else fresh)
    policy = Policy(model, tok, cfg, ["actor"])
    if critic is not None:
        hidden = json.loads((Path(critic) / "critic.json").read_text())["hidden_size"] if critic else \
            model.config.hidden_size
        policy.value_head = torch.nn.Linear(hidden, 1)
        policy.critic_fresh = not critic
        policy.adapters.append(CRITIC)
    return policy


def load_sharded(cfg, world: int, *, adapter: str | None = None, critic: str | None = None, rank: int | None = None):
    """The policy of `cfg` sharded over `world` ranks, each rank reading only its rows of the checkpoints.

    `adapter`: a saved actor adapter directory (None: a fresh one). `critic`: None for no critic, "" for a
    fresh critic adapter and value head, or a saved critic directory (`policy.critic.save_critic`)."""
    import torch.distributed as dist

    from rsi_lite.policy.model import resolve_model

    rank = (dist.get_rank() if dist.is_initialized() else 0) if rank is None else rank
    for d in (adapter, critic):
        if d and not (Path(d) / "adapter_config.json").is_file():
            raise FileNotFoundError(f"{d}/adapter_config.json: missing (not a saved adapter)")
    policy = build_on_meta(cfg, adapter=adapter, critic=critic)
    buffers = {n: b.detach().clone() for n, b in policy.model.named_buffers()}
    head = None
    if critic:
        head = torch.load(Path(critic) / "value_head.pt", weights_only=True)
    elif critic is not None:  # near-constant values to start with (policy.critic.add_critic says why)
        shape = policy.value_head.weight.shape
        head = {"weight": torch.randn(shape, generator=torch.Generator().manual_seed(cfg.seed)) * 0.01
                / math.sqrt(shape[1]), "bias": torch.zeros(1)}
    if dist.is_initialized():  # a group of one shards too (the GPU check's FSDP2 on one GPU)
        D.shard(policy, world)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    policy.model.to_empty(device=device)
    for n, b in buffers.items():
        policy.model.get_buffer(n).copy_(b)
    base = _Checkpoint.of_model(Path(resolve_model(cfg.model)))
    saved = {"actor": _Checkpoint([Path(adapter) / "adapter_model.safetensors"]) if adapter else None,
             "critic": _Checkpoint([Path(critic) / "adapter_model.safetensors"]) if critic else None}
    with torch.no_grad():
        for name, p in policy.model.named_parameters():
            local, start, n = _rows_of(p, rank, world)
            if ".lora_" in name:
                which = "critic" if ".critic." in name else "actor"
                src = (saved[which].rows(_adapter_key(name, which), start, n) if saved[which] is not None
                       else _fresh_lora(name, tuple(p.shape), cfg.seed)[start:start + n])
            else:
                src = base.rows(_base_key(name), start, n)
            local.copy_(src.reshape(local.shape).to(local.dtype))
        if critic is not None:
            policy.value_head.to_empty(device=device)
            for name, p in policy.value_head.named_parameters():
                local, start, n = _rows_of(p, rank, world)
                local.copy_(head[name][start:start + n].reshape(local.shape).to(local.dtype))
    policy.bytes_read = base.bytes_read + sum(c.bytes_read for c in saved.values() if c is not None)
    return policy


def local_parameter_bytes(module) -> int:
    """Bytes of parameters this rank holds (its shards under FSDP2; meta tensors count by their shape)."""
    from torch.distributed.tensor import DTensor

    total = 0
    for p in module.parameters():
        t = p.to_local() if isinstance(p, DTensor) else p
        total += t.numel() * t.element_size()
    return total
