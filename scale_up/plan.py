"""RETIRED with the home-made path (issue 48: scale_up/ now runs on verl, scale_up/README.md); kept only while
notebooks/07_scale_up.ipynb imports `Plan`, `make_plan` and `describe` from it. The modules it launched are gone.

The memory and time plan of the sharded stages: `python -m scale_up.plan --config C.json` (a dry run).

It describes what `scale_up/` builds, from the same config objects the stages run with: the `rsr` and
`rpr` blocks are `RSRConfig` and `RPRConfig` fields laid over the `gpu` profile's (`scale_up.launch.scale_profile`
runs the loop with the same blocks), the model is loaded as `policy.actor.load_actor` does (`PolicyConfig` with
`rpr.dtype`; LoRA rank and targets at their defaults). What is built:
- one base model in `rpr.dtype`, frozen, sharded by FSDP2 over every GPU of the job (a 1-D mesh);
- two LoRA adapters on it, the actor and the critic, and the critic's value head: float32 masters, float32
  gradients, Adam's two float32 moments, sharded the same way;
- each trajectory trained whole on one GPU (no context parallelism: a sequence must fit one GPU, and
  `max_sequence_tokens` says how long one can be), with activation checkpointing
  (`RPRConfig.gradient_checkpointing`) and log-probabilities computed only at the action tokens
  (`policy.critic.token_logprobs`: float32 logits and their log-softmax for those columns only).

Per GPU, with W GPUs, P base parameters, T trainable (LoRA + head) parameters, a sequence of s tokens:

    base         P * bytes(dtype) / W
    trainable    T * 16 / W                        (float32 master, gradient, Adam m and v)
    activations  L * s * h * bytes                  (each layer's checkpointed input)
               + 34 * s * h                         (one layer's recomputed working set, bf16, fused attention)
               + a * s * V * 4 * 2                  (float32 logits and log-softmax of the a * s action tokens)
               + 2 * layer_params * bytes           (two all-gathered layers in flight)

Actor and critic passes run one after the other, so one pass's activations are resident at a time. Time:
about 14 * P FLOPs per trained token and PPO epoch (actor: forward, recomputed forward and backward through
the frozen base, 6 P; the same for the critic, 6 P; the critic's values for the advantages, 2 P), at an
assumed model-FLOPs utilisation. No GPU is needed; nothing here was measured on GPUs.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

GB = 1024 ** 3
BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass
class ModelSpec:
    """A dense decoder (Llama / Qwen2 shape): what `scale_up.load_check.qwen_config` builds on the meta device."""

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

    def shapes(self) -> dict:
        """(in, out) of each linear layer of a block, by the name LoRA targets."""
        kv = self.kv_heads * self.head_dim
        h, i = self.hidden, self.intermediate
        return {"q_proj": (h, h), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (h, h),
                "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}

    def layer_params(self) -> int:
        return sum(a * b for a, b in self.shapes().values()) + 2 * self.hidden

    def params(self) -> int:
        emb = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return self.layers * self.layer_params() + emb + self.hidden

    def lora_params(self, r: int, targets: list[str]) -> int:
        """One adapter of rank r on `targets` in every layer: r * (in + out) per targeted linear layer."""
        shapes = self.shapes()
        return self.layers * sum(r * sum(shapes[t]) for t in targets if t in shapes)


@dataclass
class Plan:
    """A job's hardware and the stage configs it runs."""

    model: ModelSpec = field(default_factory=ModelSpec)
    nodes: int = 4
    gpus_per_node: int = 8
    gpu_memory_gb: float = 80.0
    gpu_bf16_tflops: float = 989.0
    """Dense bf16 peak of one GPU (H100 SXM)."""
    mfu: float = 0.35
    """Assumed model-FLOPs utilisation for the time estimate."""
    sequence_tokens: int = 32768
    """The longest trajectory the job trains (whole, on one GPU); `fits` says whether it does."""
    mean_episode_tokens: int = 16000
    """Average tokens of one trajectory, for tokens per step and time (an assumption; measure yours)."""
    action_fraction: float = 0.25
    """Share of a trajectory's tokens that are the model's actions (the rest: prompts and command output)."""
    rsr: dict = field(default_factory=dict)
    """`RSRConfig` fields laid over the gpu profile's."""
    rpr: dict = field(default_factory=dict)
    """`RPRConfig` fields laid over the gpu profile's."""
    rpr2_actor_lr: float | None = None
    """RPR-2's actor learning rate (the paper: 1e-7 after 5e-7)."""
    generation: dict = field(default_factory=lambda: {"engine": "vllm", "tensor_parallel": 8, "replicas": 4})

    @classmethod
    def from_dict(cls, d: dict) -> "Plan":
        d = dict(d)
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        d["model"] = ModelSpec(**d.get("model", {}))
        return cls(**d)

    @classmethod
    def load(cls, path: str | Path) -> "Plan":
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (ValueError, TypeError) as e:
            raise ValueError(f"{path}: {e}") from e

    def policy_config(self):
        """The PolicyConfig the stages load with: `rpr.dtype`, LoRA rank and targets at their defaults
        (`policy.actor.load_actor`)."""
        from rsi_lite.policy.model import PolicyConfig

        return PolicyConfig(dtype=self.stage_configs()[1].dtype)

    def stage_configs(self):
        """(RSRConfig, RPRConfig): the gpu profile's, with this plan's fields laid over them."""
        from rsi_lite.loop.phases import profile
        from rsi_lite.rpr.config import RPRConfig
        from rsi_lite.rsr.config import RSRConfig

        p = profile("gpu")
        return (RSRConfig.from_dict(_over(p.rsr.to_dict(), self.rsr)),
                RPRConfig.from_dict(_over(p.rpr.to_dict(), self.rpr)))


def _over(base: dict, top: dict) -> dict:
    """`top` laid over `base`, nested dicts merged (a config's `ppo` or `rollout` block)."""
    out = dict(base)
    for k, v in top.items():
        out[k] = _over(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def memory_per_gpu(plan: Plan, sequence_tokens: int) -> dict:
    """GB per GPU: the sharded base and trainable states, and one pass's activations for one sequence."""
    m, pol = plan.model, plan.policy_config()
    world, b, s = plan.nodes * plan.gpus_per_node, BYTES[pol.dtype], sequence_tokens
    trainable = 2 * m.lora_params(pol.lora_r, pol.target_modules) + m.hidden + 1  # actor, critic, value head
    act = (m.layers * s * m.hidden * b + 34 * s * m.hidden + plan.action_fraction * s * m.vocab * 4 * 2
           + 2 * m.layer_params() * b)
    out = {"base": m.params() * b / world, "trainable_states": trainable * 16 / world, "activations": act}
    out = {k: v / GB for k, v in out.items()}
    out["total"] = sum(out.values())
    return out


def max_sequence_tokens(plan: Plan, limit: float = 0.9) -> int:
    """The longest sequence one GPU can train (the memory is linear in its length)."""
    fixed = memory_per_gpu(plan, 0)["total"]
    per_token = memory_per_gpu(plan, 1)["total"] - fixed
    return max(0, int((limit * plan.gpu_memory_gb - fixed) / per_token))


def make_plan(plan: Plan) -> dict:
    gpus = plan.nodes * plan.gpus_per_node
    rsr, rpr = plan.stage_configs()
    pol = plan.policy_config()
    mem = memory_per_gpu(plan, plan.sequence_tokens)
    P = plan.model.params()
    tokens = rpr.batch_tasks * rpr.rollouts_per_task * plan.mean_episode_tokens
    flops = 14 * P * tokens * rpr.ppo_epochs
    seconds = flops / (gpus * plan.gpu_bf16_tflops * 1e12 * plan.mfu)
    kv_per_token = plan.model.layers * 2 * plan.model.kv_heads * plan.model.head_dim * 2
    tp = plan.generation.get("tensor_parallel", 8)
    return {"model": plan.model.name, "parameters_billion": round(P / 1e9, 2), "gpus": gpus, "dtype": pol.dtype,
            "trainable_million": round((2 * plan.model.lora_params(pol.lora_r, pol.target_modules)) / 1e6, 1),
            "memory_gb": {k: round(v, 2) for k, v in mem.items()}, "sequence_tokens": plan.sequence_tokens,
            "gpu_memory_gb": plan.gpu_memory_gb, "fits": mem["total"] < 0.9 * plan.gpu_memory_gb,
            "max_sequence_tokens": max_sequence_tokens(plan),
            "tokens_per_step": tokens, "train_flops_per_step": flops, "train_seconds_per_step": round(seconds, 1),
            "generation": {**plan.generation, "weights_per_gpu_gb": round(P * 2 / tp / GB, 1),
                           "kv_cache_gb_per_sequence_per_gpu": round(kv_per_token * plan.sequence_tokens / tp / GB, 1)},
            "hyperparameters": {"batch": f"{rpr.batch_tasks} x {rpr.rollouts_per_task}",
                                "ratio_clip": [rpr.ppo.ratio_low, rpr.ppo.ratio_high],
                                "actor_lr": [rpr.actor_lr, plan.rpr2_actor_lr], "critic_lr": rpr.critic_lr,
                                "kl_coef": rpr.ppo.kl_coef, "ent_coef": rpr.ppo.ent_coef, "ppo_epochs": rpr.ppo_epochs,
                                "K": rsr.runbooks_per_success, "M": rsr.resolves_per_runbook,
                                "lora_r": pol.lora_r}}


def describe(doc: dict) -> str:
    m = doc["memory_gb"]
    lines = [f"{doc['model']}: {doc['parameters_billion']} B parameters in {doc['dtype']} on {doc['gpus']} GPUs "
             f"({doc['gpu_memory_gb']:.0f} GB each); actor + critic LoRA: {doc['trainable_million']} M trainable",
             "per GPU (GB): " + ", ".join(f"{k} {v:.2f}" for k, v in m.items()),
             f"a {doc['sequence_tokens']:,}-token sequence {'fits' if doc['fits'] else 'does NOT fit'} "
             f"(limit 90% of {doc['gpu_memory_gb']:.0f} GB); the longest that fits: {doc['max_sequence_tokens']:,} tokens",
             f"tokens per PPO step: {doc['tokens_per_step']:,}; training ~{doc['train_seconds_per_step']:.0f} s per step "
             f"at the assumed utilisation",
             f"generation: {doc['generation']}",
             f"hyper-parameters: {doc['hyperparameters']}"]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=str(Path(__file__).parent / "configs" / "qwen27b_32xh100.json"))
    a = ap.parse_args(argv)
    doc = make_plan(Plan.load(a.config))
    print(describe(doc))
    print("JSON:" + json.dumps(doc))


if __name__ == "__main__":
    main()
