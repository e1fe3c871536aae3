"""The memory plan of what scale_up/configs/rsi_27b.yaml launches, per GPU, estimated from the composed verl
config and the model's config.json (no GPU, nothing measured):

    python -m scale_up.memory --model-config DIR [--gpu-gb 80] [hydra overrides ...]

What the config builds (W GPUs in all, colocated: vLLM and the FSDP workers share every GPU):
  actor   a frozen base in `fsdp_config.model_dtype` (bf16 here) sharded over W, and LoRA adapters (rank r on
          every linear layer) with fp32 master, gradient and Adam's two moments, sharded over W;
  critic  full weights (the value model): fp32 master, fp32 gradient, Adam's two moments, sharded over W;
  rollout vLLM at tensor parallel t, `gpu_memory_utilization` of each GPU while it generates (its weights and
          KV cache), asleep (weights and cache released) while the workers train.
A training micro-batch holds `ppo_max_token_len_per_gpu` x Ulysses tokens, split over the Ulysses group: s
tokens per GPU. Activations with gradient checkpointing: each layer's input (L * s * h, bf16), one layer's
recomputed working set (about s * (12 h + 6 I) bf16 values), the logits of the s tokens (bf16, and their fp32
log-softmax: verl's default path materialises them; `model.use_fused_kernels`, on here, does not), two all-gathered
layers in flight. Actor and critic train one after the other, so one pass's activations at a time.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from .settings import at

GB = 1e9
TARGET = {"hidden_size": 5120, "intermediate_size": 22016, "num_hidden_layers": 64, "num_attention_heads": 40,
          "num_key_value_heads": 8, "vocab_size": 152064, "max_position_embeddings": 262144,
          "tie_word_embeddings": False, "model_type": "qwen2"}
"""The target architecture of configs/rsi_27b.yaml (a dense Qwen-family 27B): its config.json's fields."""
BYTES = {"bf16": 2, "bfloat16": 2, "fp16": 2, "float16": 2, "fp32": 4, "float32": 4}


@dataclass
class Arch:
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    vocab: int
    tied: bool
    qkv_bias: bool = True

    @classmethod
    def from_config(cls, cfg: dict) -> "Arch":
        return cls(cfg["num_hidden_layers"], cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"],
                   cfg.get("num_key_value_heads") or cfg["num_attention_heads"], cfg["vocab_size"],
                   bool(cfg.get("tie_word_embeddings", False)), cfg.get("model_type", "qwen2") == "qwen2")

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * (self.hidden // self.heads)

    def linears(self) -> list[tuple[int, int]]:
        """(in, out) of one decoder layer's linear layers: q, k, v, o, gate, up, down."""
        h, kv, i = self.hidden, self.kv_dim, self.intermediate
        return [(h, h), (h, kv), (h, kv), (h, h), (h, i), (h, i), (i, h)]

    def layer_params(self) -> int:
        bias = (self.hidden + 2 * self.kv_dim) if self.qkv_bias else 0
        return sum(a * b for a, b in self.linears()) + bias + 2 * self.hidden

    def params(self) -> int:
        return self.layers * self.layer_params() + self.vocab * self.hidden * (1 if self.tied else 2) + self.hidden

    def lora_params(self, rank: int) -> int:
        return self.layers * sum(rank * (a + b) for a, b in self.linears())


def activation_terms(s: int, arch: Arch, logits: bool) -> dict:
    """Gigabytes of one micro-batch's activations on one GPU holding `s` tokens (after the Ulysses split), with
    gradient checkpointing: each layer's input, one layer's recomputed working set, two all-gathered layers in
    flight, and (`logits`: a vocabulary head without fused kernels) the logits in bf16 and their fp32 log-softmax."""
    L, h, i, V = arch.layers, arch.hidden, arch.intermediate, arch.vocab
    return {"layer_inputs": L * s * h * 2 / GB, "working": s * (12 * h + 6 * i) * 2 / GB,
            "gathered": 2 * arch.layer_params() * 2 / GB, "logits": s * V * (2 + 4) / GB if logits else 0.0}


def plan(cfg, arch: Arch, gpu_gb: float) -> dict:
    """Per-GPU gigabytes of each phase and of each term behind them (see the module docstring); `cfg` the
    composed verl config, or the config file read without verl (`scale_up.settings.read_config`: the same
    values). Notebook 07 works each term by hand against this."""
    a, c, r = at(cfg, "actor_rollout_ref.actor"), at(cfg, "critic"), at(cfg, "actor_rollout_ref.rollout")
    W = at(cfg, "trainer.nnodes") * at(cfg, "trainer.n_gpus_per_node")
    P, L = arch.params(), arch.layers
    rank = at(cfg, "actor_rollout_ref.model.lora_rank")
    T = arch.lora_params(rank) if rank > 0 else 0
    base_bytes = BYTES[str(at(a, "fsdp_config.model_dtype", "fp32"))]
    # a LoRA actor: its frozen base at base_bytes, its adapters with fp32 master, gradient and Adam's two moments
    # (16 bytes a parameter); full weights: 16 bytes for every parameter
    base, lora_states = (P * base_bytes / W, 16 * T / W) if rank > 0 else (16 * P / W, 0.0)
    critic_rank = at(c, "model.lora_rank", 0)
    critic_states = 16 * P / W if critic_rank == 0 else (P * 2 + 16 * arch.lora_params(critic_rank)) / W

    fused = bool(at(cfg, "actor_rollout_ref.model.use_fused_kernels", False))
    # the critic's head has one output, not V; fused kernels compute log-probabilities without the logits
    act_actor = activation_terms(at(a, "ppo_max_token_len_per_gpu"), arch, logits=not fused)
    act_critic = activation_terms(at(c, "ppo_max_token_len_per_gpu"), arch, logits=False)
    t = at(r, "tensor_model_parallel_size")
    rollout = {"vllm_weights": 2 * P / t / GB, "vllm_total": at(r, "gpu_memory_utilization") * gpu_gb}
    kv_per_token = 2 * L * arch.kv_dim * 2  # K and V, bf16, per token, one replica
    rollout["kv_cache_tokens_per_replica"] = int(max(0.0, rollout["vllm_total"] - rollout["vllm_weights"]) * GB * t
                                                 / kv_per_token)
    states = (base + lora_states + critic_states) / GB
    out = {
        "gpus": W, "params_B": P / 1e9, "lora_params_M": T / 1e6,
        "actor_base_gb": base / GB, "actor_lora_states_gb": lora_states / GB,
        "actor_states_gb": (base + lora_states) / GB, "critic_states_gb": critic_states / GB,
        "actor_activations_gb": sum(act_actor.values()), "critic_activations_gb": sum(act_critic.values()),
        "actor_activation_terms": act_actor,
        "actor_train_gb": states + sum(act_actor.values()), "critic_train_gb": states + sum(act_critic.values()),
        "rollout_gb": states + rollout["vllm_total"], **rollout, "kv_bytes_per_token": kv_per_token,
        "tokens_per_micro_batch": at(a, "ppo_max_token_len_per_gpu") * at(a, "ulysses_sequence_parallel_size"),
        "context": at(r, "prompt_length") + at(r, "response_length"),
    }
    out["fits"] = max(out["actor_train_gb"], out["critic_train_gb"], out["rollout_gb"]) <= gpu_gb
    return out


def describe(p: dict, gpu_gb: float) -> str:
    rows = [f"{p['gpus']} GPUs of {gpu_gb:.0f} GB; a {p['params_B']:.2f} B model, LoRA actor {p['lora_params_M']:.0f} M "
            f"trainable; context {p['context']:,} tokens, {p['tokens_per_micro_batch']:,} tokens a micro-batch",
            f"  resident states: actor {p['actor_states_gb']:.1f} GB, critic {p['critic_states_gb']:.1f} GB per GPU",
            f"  rollout (vLLM awake):   {p['rollout_gb']:.1f} GB (vLLM {p['vllm_total']:.1f}, its weights "
            f"{p['vllm_weights']:.1f}); KV cache for {p['kv_cache_tokens_per_replica']:,} tokens per replica",
            f"  actor update:           {p['actor_train_gb']:.1f} GB",
            f"  critic update:          {p['critic_train_gb']:.1f} GB",
            f"  fits: {'yes' if p['fits'] else 'NO'}"]
    return "\n".join(rows)


def main(argv=None) -> None:
    from hydra import compose, initialize_config_dir

    ap = argparse.ArgumentParser(prog="python -m scale_up.memory")
    ap.add_argument("--model-config", required=True, help="a model directory (its config.json) or the file")
    ap.add_argument("--gpu-gb", type=float, nargs="+", default=[80.0, 141.0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args(argv)
    path = Path(args.model_config)
    arch = Arch.from_config(json.loads((path / "config.json" if path.is_dir() else path).read_text()))
    with initialize_config_dir(config_dir=str(Path(__file__).parent / "configs"), version_base=None):
        cfg = compose(config_name="rsi_27b", overrides=list(args.overrides))
    for gb in args.gpu_gb:
        p = plan(cfg, arch, gb)
        print(json.dumps({"gpu_gb": gb, **p, "arch": asdict(arch)}) if args.json else describe(p, gb))


if __name__ == "__main__":
    main()
