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

The self-rewrite's SFT job (configs/rsi_sft.yaml, verl's SFT trainer: the LoRA actor alone, its logits always
materialised) is planned beside it (`sft_plan`), and so are the cycle's kit jobs (`eval`, `rewrite`: generation
only) on one GPU where the driver runs (`kit_job`, `kit_jobs`): the route `scale_up.loading` chooses (vLLM in
bf16, or the kit's model in bf16 with transformers' engine), at the `gpu` profile's settings in PPO's episode
shape; by default they run on the replicas instead (`"serve": true`).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .settings import at, episode_fields

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


def sft_plan(sft: dict, arch: Arch, gpu_gb: float) -> dict:
    """Per-GPU gigabytes of the self-rewrite's SFT job (configs/rsi_sft.yaml as plain YAML: verl's SFT trainer,
    its own process, so no critic and no vLLM beside it): the LoRA actor's states as in `plan`, and one
    micro-batch of `data.max_token_len_per_gpu` tokens with its logits, which verl 0.9.1's SFT trainer always
    materialises (it passes the engine no `use_fused_kernels`, sft_trainer.py's meta_info)."""
    W = sft["trainer"]["nnodes"] * sft["trainer"]["n_gpus_per_node"]
    rank = sft["model"]["lora_rank"]
    if rank > 0:  # the frozen base at its dtype, the adapters with fp32 master, gradient and Adam's two moments
        states = (arch.params() * BYTES[str(sft["engine"]["model_dtype"])] + 16 * arch.lora_params(rank)) / W
    else:  # full weights: 16 bytes a parameter, as `plan` counts them
        states = 16 * arch.params() / W
    tokens = sft["data"]["max_token_len_per_gpu"]
    act = activation_terms(tokens, arch, logits=True)
    total = states / GB + sum(act.values())
    return {"gpus": W, "tokens_per_gpu": tokens, "states_gb": states / GB, "activation_terms": act,
            "total_gb": total, "fits": total <= gpu_gb}


def describe_sft(p: dict, gpu_gb: float) -> str:
    a = p["activation_terms"]
    return (f"  self-rewrite SFT:       {p['total_gb']:.1f} GB (states {p['states_gb']:.1f}, layer inputs "
            f"{a['layer_inputs']:.1f}, working {a['working']:.1f}, gathered {a['gathered']:.1f}, logits "
            f"{a['logits']:.1f} at {p['tokens_per_gpu']:,} tokens a GPU): {'fits' if p['fits'] else 'does NOT fit'}")


# ---------------------------------------------------------------- the cycle's kit jobs on one GPU

KIT_UTILIZATION = 0.85
"""The share of one GPU a kit job plans for: vLLM's `gpu_memory_utilization` (the kit's default), and the same
budget for the transformers route. The rest is left to what is not counted here: the CUDA context, the forward's
working memory (vLLM measures its own at start-up) and the allocator's fragmentation."""


def kv_bytes_per_token(arch: Arch, dtype: str = "bf16") -> int:
    """Key and value of one token in every layer, in `dtype`."""
    return 2 * arch.layers * arch.kv_dim * BYTES[dtype]


def kit_job(arch: Arch, route: str, dtype: str, *, adapter_rank: int, context_budget: int, batch: int,
            gpu_gb: float, max_model_len: int = 0, page_size: int = 64, utilization: float = KIT_UTILIZATION) -> dict:
    """Per-GPU gigabytes of the policy of one of the cycle's kit jobs (`eval`, `rewrite`: generation only, one
    GPU; `scale_up.loading` chooses the route), estimated from the model's shape, not measured.

      'hf'    the kit's `load_actor`: the base in `dtype`, the LoRA adapter in fp32 (peft keeps adapters fp32 on a
              bf16 base), and transformers' continuous batching engine, whose paged cache holds `batch` + 1
              contexts of `context_budget` tokens (`policy.gen.hf_continuous`: one page more each). Fits when
              the sum is within `utilization` of the GPU.
      'vllm'  `vllm_policy`: the base in bf16, one LoRA slot of `adapter_rank` (bf16), and a KV cache of what is
              left of `utilization` of the GPU. Fits when that cache holds `max_model_len` tokens, the check vLLM
              makes at start-up; it schedules the batch within its cache.
    """
    if route not in ("hf", "vllm"):
        raise ValueError(f"kit_job: route {route!r} is not 'hf' or 'vllm'")
    budget = utilization * gpu_gb
    weights = arch.params() * BYTES[dtype] / GB
    kv_token = kv_bytes_per_token(arch, dtype)
    out = {"route": route, "dtype": dtype, "gpu_gb": gpu_gb, "budget_gb": budget, "weights_gb": weights}
    if route == "hf":
        from rsi_lite.policy.gen.hf_continuous import cache_blocks

        tokens = cache_blocks(batch, context_budget, page_size) * page_size
        out.update(adapter_gb=4 * arch.lora_params(adapter_rank) / GB, kv_cache_tokens=tokens,
                   kv_cache_gb=tokens * kv_token / GB, batch=batch)
        out["total_gb"] = weights + out["adapter_gb"] + out["kv_cache_gb"]
        out["fits"] = out["total_gb"] <= budget
    else:
        out["adapter_gb"] = 2 * arch.lora_params(adapter_rank) / GB
        out["kv_cache_gb"] = max(0.0, budget - weights - out["adapter_gb"])
        out.update(kv_cache_tokens=int(out["kv_cache_gb"] * GB / kv_token), max_model_len=max_model_len,
                   total_gb=weights + out["adapter_gb"] + out["kv_cache_gb"])
        out["fits"] = weights + out["adapter_gb"] < budget and out["kv_cache_tokens"] >= max_model_len
    return out


def hf_max_batch(arch: Arch, dtype: str, *, adapter_rank: int, context_budget: int, gpu_gb: float,
                 page_size: int = 64, utilization: float = KIT_UTILIZATION) -> int:
    """The most episodes the 'hf' route decodes at once within the budget (`kit_job`); 0 or less: not even one."""
    one = kit_job(arch, "hf", dtype, adapter_rank=adapter_rank, context_budget=context_budget, batch=0,
                  gpu_gb=gpu_gb, page_size=page_size, utilization=utilization)
    per_context = one["kv_cache_gb"]  # batch 0 holds the one spare context
    return int((one["budget_gb"] - one["weights_gb"] - one["adapter_gb"]) // per_context) - 1


KIT_MIN_MODEL_LEN = 8192
"""The shortest `max_model_len` a kit job's vLLM engine gets: the rewrite's runbook planner and reviewer prompt with
a task's instruction and a transcript (`rsr.runbook.transcript`, cut at the gpu profile's 16,000 characters,
about 5,000 tokens) and a reply of up to 1,024 tokens (`RSRConfig.planner_tokens`), which the rollout's
`context_budget` does not bound; vLLM refuses a prompt longer than its `max_model_len`."""


def vllm_model_len(context_budget: int) -> int:
    """The `max_model_len` of a kit job's vLLM engine whose episodes hold `context_budget` tokens."""
    return max(context_budget, KIT_MIN_MODEL_LEN)


def kit_jobs(arch: Arch, gpu_gb: float, adapter_rank: int) -> dict:
    """Each generation job of the cycle (`eval`, `rewrite`) on one GPU of `gpu_gb`, at the rollout settings the jobs
    run with (the `gpu` profile's, in PPO's episode shape: `settings.episode_fields`): the vLLM route, the
    transformers route in bf16 at the configured batch and the batch it can hold (`hf_max_batch`), and what the
    float32 load (the kit's default) needs for its weights alone."""
    from rsi_lite.loop.profiles import profile

    p, shape = profile("gpu"), episode_fields()
    out = {}
    for job, r in (("eval", replace(p.eval.rollout, **shape)), ("rewrite", replace(p.rsr.rollout, **shape))):
        common = dict(adapter_rank=adapter_rank, context_budget=r.context_budget, gpu_gb=gpu_gb,
                      page_size=r.page_size)
        out[job] = {"vllm": kit_job(arch, "vllm", "bf16", batch=r.batch_size,
                                    max_model_len=vllm_model_len(r.context_budget), **common),
                    "hf": kit_job(arch, "hf", "bf16", batch=r.batch_size, **common),
                    "hf_max_batch": hf_max_batch(arch, "bf16", **common),
                    "fp32_weights_gb": arch.params() * 4 / GB}
    return out


def describe_kit_job(job: str, p: dict) -> str:
    if p["route"] == "hf":
        return (f"  {job:8} transformers, {p['dtype']}: {p['total_gb']:.1f} GB at {p['batch']} episodes (weights "
                f"{p['weights_gb']:.1f}, adapter {p['adapter_gb']:.1f}, cache {p['kv_cache_gb']:.1f}) of "
                f"{p['budget_gb']:.1f}: {'fits' if p['fits'] else 'does NOT fit'}")
    return (f"  {job:8} vLLM, {p['dtype']}: weights {p['weights_gb']:.1f} GB + LoRA slot {p['adapter_gb']:.1f}, KV "
            f"cache {p['kv_cache_gb']:.1f} GB ({p['kv_cache_tokens']:,} tokens, {p['max_model_len']:,} needed): "
            f"{'fits' if p['fits'] else 'does NOT fit'}")


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
    import yaml
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
    rank = at(cfg, "actor_rollout_ref.model.lora_rank")
    sft_cfg = yaml.safe_load((Path(__file__).parent / "configs" / "rsi_sft.yaml").read_text())
    for gb in args.gpu_gb:
        p, kit, sft = plan(cfg, arch, gb), kit_jobs(arch, gb, rank), sft_plan(sft_cfg, arch, gb)
        if args.json:
            print(json.dumps({"gpu_gb": gb, **p, "sft": sft, "kit_jobs": kit, "arch": asdict(arch)}))
            continue
        print(describe(p, gb))
        print(describe_sft(sft, gb))
        print(f"  the kit's jobs (eval, rewrite) over the cluster (\"serve\": true, the default): the replicas "
              f"above, KV cache for {p['kv_cache_tokens_per_replica']:,} tokens each")
        print(f"  the kit's jobs on one {gb:.0f} GB GPU instead (float32 weights alone: "
              f"{kit['eval']['fp32_weights_gb']:.1f} GB; scale_up.loading chooses vLLM where it imports):")
        for job, k in kit.items():
            most = k["hf_max_batch"]
            print(describe_kit_job(job, k["vllm"]))
            print(describe_kit_job(job, k["hf"]) + (f"; at most {most} episodes" if most > 0 else "; not one episode"))


if __name__ == "__main__":
    main()
