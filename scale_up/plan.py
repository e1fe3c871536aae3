"""The memory and time plan for a ~27B actor and critic: `python -m scale_up.plan --config C.json` (a dry run).

Per GPU, for each model (actor, critic), with FSDP2 sharding its states over `fsdp_shards`
GPUs and context parallelism splitting each sequence over `context_parallel` GPUs:

    parameters   P * 2 bytes / shards                         (bf16)
    gradients    P * 2 bytes / shards                         (bf16, reduce-scattered)
    optimizer    P * 12 bytes / shards                        (fp32 master + Adam m and v)
    activations  L * s * h * 2  +  34 * s * h  +  s * V * 4 / logit_chunks  +  2 * layer_params * 2
                 (full activation checkpointing: one bf16 input per layer, one layer's working
                 set recomputed (Korthikanti et al., flash attention), the chunked fp32 logits,
                 two all-gathered layers in flight), s = context tokens / context_parallel

Actor and critic are trained one after the other on the same GPUs, so both models' states
are resident and the activations of one. Time: 6 * P * tokens FLOPs per model and step
(8 * P * tokens with recomputation), at an assumed model-FLOPs utilisation.
No GPU is needed; nothing here was measured on GPUs.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

GB = 1024 ** 3


@dataclass
class ModelSpec:
    name: str = "Qwen-family 27B (dense)"
    layers: int = 64
    hidden: int = 5120
    intermediate: int = 22016
    heads: int = 40
    kv_heads: int = 8
    vocab: int = 152064
    tied_embeddings: bool = False

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def layer_params(self) -> int:
        kv = self.kv_heads * self.head_dim
        attention = 2 * self.hidden * self.hidden + 2 * self.hidden * kv
        return attention + 3 * self.hidden * self.intermediate + 2 * self.hidden

    def params(self) -> int:
        emb = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return self.layers * self.layer_params() + emb + self.hidden


@dataclass
class Plan:
    """A sharding plan and the paper's hyper-parameters."""

    model: ModelSpec = field(default_factory=ModelSpec)
    nodes: int = 4
    gpus_per_node: int = 8
    gpu_memory_gb: float = 80.0
    gpu_bf16_tflops: float = 989.0
    """Dense bf16 peak of one GPU (H100 SXM)."""
    mfu: float = 0.35
    """Assumed model-FLOPs utilisation for the time estimate."""
    fsdp_shards: int = 32
    context_parallel: int = 8
    context_tokens: int = 262_144
    """The longest sequence trained on (the paper's context)."""
    mean_episode_tokens: int = 40_000
    """Average tokens of one trajectory, for tokens per step and time (an assumption; measure yours)."""
    logit_chunks: int = 8
    critic: str = "full"
    """'full' (a separate 27B critic, as the paper) or 'lora' (an adapter on the actor's base, as the laptop kit)."""
    lora_fraction: float = 0.01
    """Trainable fraction of the parameters for a LoRA critic."""
    batch_tasks: int = 256
    rollouts_per_task: int = 1
    ratio_clip: tuple = (0.7, 6.0)
    actor_lr: tuple = (5e-7, 1e-7)
    """RPR-1, RPR-2."""
    critic_lr: float = 1.5e-5
    kl_coef: float = 0.0
    ent_coef: float = 0.0
    runbooks_per_success: int = 4
    resolves_per_runbook: int = 4
    generation: dict = field(default_factory=lambda: {"engine": "vllm", "tensor_parallel": 8, "replicas": 4})

    @classmethod
    def from_dict(cls, d: dict) -> "Plan":
        d = dict(d)
        d["model"] = ModelSpec(**d.get("model", {}))
        for k in ("ratio_clip", "actor_lr"):
            if k in d:
                d[k] = tuple(d[k])
        return cls(**d)


def model_memory(plan: Plan, trainable_fraction: float = 1.0) -> dict:
    m, P = plan.model, plan.model.params()
    shards = plan.fsdp_shards
    s = plan.context_tokens / plan.context_parallel
    trainable = P * trainable_fraction
    act = (m.layers * s * m.hidden * 2 + 34 * s * m.hidden + s * m.vocab * 4 / plan.logit_chunks
           + 2 * m.layer_params() * 2)
    out = {"parameters": P * 2 / shards, "gradients": trainable * 2 / shards, "optimizer": trainable * 12 / shards,
           "activations": act}
    out = {k: v / GB for k, v in out.items()}
    out["total"] = sum(out.values())
    return out


def make_plan(plan: Plan) -> dict:
    gpus = plan.nodes * plan.gpus_per_node
    if plan.fsdp_shards > gpus or gpus % plan.context_parallel:
        raise ValueError(f"fsdp_shards {plan.fsdp_shards} / context_parallel {plan.context_parallel} do not fit {gpus} GPUs")
    actor = model_memory(plan)
    critic = model_memory(plan, 1.0 if plan.critic == "full" else plan.lora_fraction)
    if plan.critic == "lora":  # the critic shares the actor's (frozen-for-it) base: only its adapter is extra
        critic["parameters"] = plan.model.params() * plan.lora_fraction * 2 / plan.fsdp_shards / GB
        critic["total"] = sum(v for k, v in critic.items() if k != "total")
    resident = (actor["total"] - actor["activations"]) + (critic["total"] - critic["activations"])
    peak = resident + max(actor["activations"], critic["activations"])
    tokens = plan.batch_tasks * plan.rollouts_per_task * plan.mean_episode_tokens
    P = plan.model.params()
    flops = 8 * P * tokens * (2 if plan.critic == "full" else 1.3)  # recompute: 8 P per token; a LoRA critic ~0.3
    seconds = flops / (gpus * plan.gpu_bf16_tflops * 1e12 * plan.mfu)
    kv_per_token = plan.model.layers * 2 * plan.model.kv_heads * plan.model.head_dim * 2
    tp = plan.generation.get("tensor_parallel", 8)
    return {"model": plan.model.name, "parameters_billion": round(P / 1e9, 2), "gpus": gpus,
            "memory_gb": {"actor": _r(actor), "critic": _r(critic)}, "peak_per_gpu_gb": round(peak, 1),
            "gpu_memory_gb": plan.gpu_memory_gb, "fits": peak < 0.9 * plan.gpu_memory_gb,
            "tokens_per_step": tokens, "train_flops_per_step": flops, "train_seconds_per_step": round(seconds, 1),
            "generation": {**plan.generation, "weights_per_gpu_gb": round(P * 2 / tp / GB, 1),
                           "kv_cache_gb_per_full_context_sequence_per_gpu": round(kv_per_token * plan.context_tokens / tp / GB, 1)},
            "hyperparameters": {"batch": f"{plan.batch_tasks} x {plan.rollouts_per_task}", "ratio_clip": plan.ratio_clip,
                                "actor_lr": plan.actor_lr, "critic_lr": plan.critic_lr, "kl_coef": plan.kl_coef,
                                "ent_coef": plan.ent_coef, "K": plan.runbooks_per_success, "M": plan.resolves_per_runbook}}


def _r(d: dict) -> dict:
    return {k: round(v, 2) for k, v in d.items()}


def describe(doc: dict) -> str:
    lines = [f"{doc['model']}: {doc['parameters_billion']} B parameters on {doc['gpus']} GPUs "
             f"({doc['gpu_memory_gb']:.0f} GB each)", f"{'per GPU (GB)':14}" + "".join(f"{k:>13}" for k in
                                                                             doc["memory_gb"]["actor"])]
    for role, m in doc["memory_gb"].items():
        lines.append(f"{role:14}" + "".join(f"{v:13.2f}" for v in m.values()))
    verdict = "fits" if doc["fits"] else "does NOT fit"
    lines += [f"peak per GPU (both models' states + one model's activations): {doc['peak_per_gpu_gb']} GB -> {verdict} "
              f"(limit 90% of {doc['gpu_memory_gb']:.0f} GB)",
              f"tokens per PPO step: {doc['tokens_per_step']:,}; training ~{doc['train_seconds_per_step']:.0f} s per step "
              f"at the assumed utilisation",
              f"generation: {doc['generation']}",
              f"hyper-parameters: {doc['hyperparameters']}"]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default=str(Path(__file__).parent / "configs" / "qwen27b_32xh100.json"))
    a = ap.parse_args(argv)
    plan = Plan.from_dict(json.loads(Path(a.config).read_text()))
    doc = make_plan(plan)
    print(describe(doc))
    print("JSON:" + json.dumps(doc))


if __name__ == "__main__":
    main()
