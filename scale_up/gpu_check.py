"""The GPU check's steps (`scale_up/gpu_check.sh` runs them in order on a bare GPU machine):

    python -m scale_up.gpu_check model --out DIR [--size 1b|tiny]       # a random Qwen2 model, bf16 safetensors
    python -m scale_up.gpu_check generate --model DIR --out G.json      # vLLM: tokens/s, LoRA reload
    torchrun --nproc_per_node=N -m scale_up.gpu_check train --model DIR --out T.json   # bf16 FSDP2 SFT + PPO

The model has random weights (nothing can be downloaded on the check's machine but packages) and the bundled
model's tokenizer: what is checked is the machinery and its cost, not what the model says. `1b` is a Qwen2
architecture of ~0.9 B parameters (2048 hidden, 16 layers); `tiny` is for running the steps on a CPU.

`generate`: the kit's `VLLMGenerator` (the rollout engine's submit/poll interface) on a vLLM engine with LoRA:
a batch of prompts with the actor adapter, then the adapter changed and saved again (`save_actor` writes a new
directory: a new `LoRARequest` id), the same prompts greedily again: the outputs must change. Prints
generated tokens/s and peak GPU memory.

`train`: `scale_up.sharded_load.load_sharded` (meta device, FSDP2 in bf16 mixed precision, each rank reading its
rows), then the kit's own `train_sft` (masked SFT steps) and `rpr.update.update` (one joint PPO update with
critic) on synthetic sequences. Prints training tokens/s, peak memory, and the losses (finite, SFT falling).
Every step prints one line `CHECK <name> ok|FAILED ...`; the script's exit status says whether all passed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import torch

SIZES = {"1b": dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=16,
                    num_key_value_heads=4),
         "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2)}


def report(name: str, ok: bool, **figures) -> bool:
    print(f"CHECK {name} {'ok' if ok else 'FAILED'} " + json.dumps(figures), flush=True)
    return ok


def make_model(out: Path, size: str) -> Path:
    """A random Qwen2 model of `size` with the bundled tokenizer, saved as bf16 safetensors (once)."""
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    from rsi_lite.policy.model import prepare_model
    from rsi_lite.records import atomic_dir

    if (out / "config.json").is_file():
        return out
    tok = AutoTokenizer.from_pretrained(str(prepare_model()))
    cfg = Qwen2Config(vocab_size=len(tok), max_position_embeddings=8192, tie_word_embeddings=False,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, **SIZES[size])
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(cfg).to(torch.bfloat16)
    with atomic_dir(out) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    print(f"model {out}: {sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters", flush=True)
    return out


def _adapter(model: str, dest: Path, seed: int) -> Path:
    """A LoRA actor adapter with non-zero weights (B is zero at init), saved where vLLM reads it."""
    from rsi_lite.policy.actor import load_actor, save_actor

    pol = load_actor("base", model=model, dtype="bfloat16")
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in pol.model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return save_actor(pol, dest)


def generate(model: str, out: Path, prompts: int, max_new_tokens: int) -> bool:
    from transformers import AutoTokenizer

    from rsi_lite.policy.gen.vllm_engine import VLLMGenerator, VLLMPolicy, vllm_engine

    tok = AutoTokenizer.from_pretrained(model)
    work = out.parent / "adapters"
    engine = vllm_engine(model, max_model_len=4096, max_lora_rank=16, gpu_memory_utilization=0.5)
    texts = [tok.apply_chat_template([{"role": "user", "content": f"List the files in directory {i} and count "
                                       "the lines of each."}], tokenize=False, add_generation_prompt=True)
             for i in range(prompts)]
    ids = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]

    def run(adapter: Path, temperature: float) -> tuple[dict, float, int]:
        gen = VLLMGenerator(VLLMPolicy(tok, engine, str(adapter)), max_new_tokens=max_new_tokens,
                            temperature=temperature)
        got, t0 = {}, time.monotonic()
        with gen:
            for i, p in enumerate(ids):
                gen.submit(i, p)
            while gen.busy:
                for key, g in gen.poll():
                    got[key] = g
        return got, time.monotonic() - t0, sum(len(g.token_ids) for g in got.values())

    first = _adapter(model, work / "a", seed=1)
    run(first, 1.0)  # warm-up: CUDA graphs, the adapter's first load
    got, secs, tokens = run(first, 1.0)
    ok = report("vllm_generation", len(got) == prompts and tokens > 0, prompts=prompts, tokens=tokens,
                seconds=round(secs, 2), tokens_per_s=round(tokens / secs, 1))
    before, _, _ = run(first, 0.0)
    second = _adapter(model, work / "b", seed=2)
    after, _, _ = run(second, 0.0)
    changed = sum(before[k].token_ids != after[k].token_ids for k in before)
    lps = [x for g in after.values() for x in g.logprobs]
    ok &= report("vllm_lora_reload", changed > prompts // 2 and all(math.isfinite(x) and x <= 0 for x in lps),
                 replies_changed=changed, of=prompts)
    peak = torch.cuda.max_memory_allocated() / 2 ** 30 if torch.cuda.is_available() else 0.0
    out.write_text(json.dumps({"tokens_per_s": tokens / secs, "tokens": tokens, "seconds": secs,
                               "replies_changed_by_reload": changed, "torch_peak_gb_this_process": peak}) + "\n")
    return ok


def _synthetic(n: int, length: int, vocab: int, seed: int = 0):
    """n SFT examples and n two-turn PPO trajectories of `length` tokens (random ids; half the tokens actions)."""
    from rsi_lite.rollout.trajectory import Trajectory
    from rsi_lite.rsr.clean import Example

    g = torch.Generator().manual_seed(seed)
    q = length // 4
    mask = [0] * q + [1] * q + [0] * q + [1] * (length - 3 * q)
    examples, trajs = [], []
    for i in range(n):
        ids = torch.randint(10, vocab, (length,), generator=g).tolist()
        examples.append(Example(f"t{i}", "f", "resolve", [], ids, mask, True))
        trajs.append(Trajectory(task=f"t{i}", task_path="", suite="pool", family="f", difficulty="easy",
                                harness="plain", action_format="bash", policy="x", seed=i, system="", messages=[],
                                token_ids=ids, action_mask=mask, logprobs=[-2.0 if m else 0.0 for m in mask],
                                turn_spans=[[q, 2 * q], [3 * q, length]], finish_reason="complete", turns=2,
                                verifier={"strict": i % 2, "passed": 1 + i % 2, "total": 2},
                                rewards={"s": float(i % 2), "spr": float(i % 2) or 0.25, "fdr": 0.5},
                                tokens={"generated": length // 2}, timings={}))
    return examples, trajs


def train(model: str, out: Path, examples: int, length: int) -> bool:
    import torch.distributed as dist

    from rsi_lite.policy.model import PolicyConfig
    from rsi_lite.rpr.config import RPRConfig
    from rsi_lite.rpr.stage import make_optimizers
    from rsi_lite.rpr.update import update
    from rsi_lite.rsr.sft import SFTConfig, train_sft

    from .dist import equal_share, mean_over_ranks
    from .sharded_load import load_sharded, local_parameter_bytes

    if not dist.is_initialized():  # even on one GPU: FSDP2 and its mixed precision are what is checked
        if torch.cuda.is_available():
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg = PolicyConfig(model=model, dtype="bfloat16", lora_r=16, lora_alpha=32)
    t0 = time.monotonic()
    policy = load_sharded(cfg, world, critic="", rank=rank)
    load_s = time.monotonic() - t0
    ex, trajs = _synthetic(examples, length, policy.model.config.vocab_size)
    ok = report("sharded_load", True, seconds=round(load_s, 1), world=world,
                bytes_read_gb=round(policy.bytes_read / 2 ** 30, 3),
                local_parameter_gb=round(local_parameter_bytes(policy.model) / 2 ** 30, 3))

    log = out.parent / f"sft.rank{rank}.jsonl"
    t0 = time.monotonic()
    train_sft(policy, equal_share(ex, rank, world), SFTConfig(epochs=2, lr=1e-3, batch_size=max(1, examples // world // 2),
                                                              warmup_steps=0, seed=0, loop="kit"), metrics_path=log)
    sft_s = time.monotonic() - t0
    losses = [mean_over_ranks(json.loads(x)["losses/sft"], world) for x in log.read_text().splitlines()]
    sft_tokens = 2 * examples * length
    ok &= report("fsdp2_bf16_sft", len(losses) >= 2 and all(math.isfinite(x) for x in losses) and losses[-1] < losses[0],
                 losses=[round(x, 4) for x in losses], seconds=round(sft_s, 1),
                 tokens_per_s=round(sft_tokens / sft_s, 1))

    rcfg = RPRConfig(minibatch=max(1, examples // world // 2), actor_lr=1e-5, critic_lr=1e-5)
    optims = make_optimizers(policy, rcfg)
    t0 = time.monotonic()
    row = update(policy, equal_share(trajs, rank, world), rcfg, optims, train_actor=True)
    ppo_s = time.monotonic() - t0
    row = {k: mean_over_ranks(v, world) if isinstance(v, float) else v for k, v in row.items()}
    ok &= report("fsdp2_bf16_ppo", all(math.isfinite(row[k]) for k in ("losses/policy", "losses/value")),
                 policy=round(row["losses/policy"], 5), value=round(row["losses/value"], 5),
                 ratio_max=round(row.get("ratio/max", float("nan")), 4), seconds=round(ppo_s, 1),
                 tokens_per_s=round(examples * length / ppo_s, 1))
    peak = torch.cuda.max_memory_allocated() / 2 ** 30 if torch.cuda.is_available() else 0.0
    report("peak_memory", True, gpu_gb=round(peak, 2), world=world)
    if rank == 0:
        out.write_text(json.dumps({"world": world, "load_s": load_s, "sft_losses": losses, "sft_s": sft_s,
                                   "ppo": row, "ppo_s": ppo_s, "peak_gpu_gb": peak}) + "\n")
    dist.barrier()
    dist.destroy_process_group()
    return ok


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model")
    m.add_argument("--out", required=True)
    m.add_argument("--size", default="1b", choices=sorted(SIZES))
    g = sub.add_parser("generate")
    g.add_argument("--model", required=True)
    g.add_argument("--out", required=True)
    g.add_argument("--prompts", type=int, default=64)
    g.add_argument("--max-new-tokens", type=int, default=256)
    t = sub.add_parser("train")
    t.add_argument("--model", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--examples", type=int, default=8)
    t.add_argument("--length", type=int, default=2048)
    a = ap.parse_args(argv)
    if a.cmd == "model":
        make_model(Path(a.out), a.size)
        return
    ok = (generate(a.model, Path(a.out), a.prompts, a.max_new_tokens) if a.cmd == "generate"
          else train(a.model, Path(a.out), a.examples, a.length))
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
