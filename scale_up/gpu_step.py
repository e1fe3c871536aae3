"""The check for the first machine with a GPU: one PPO update of the kit's (TB-GAE advantages from the critic's
values, the asymmetric clip, a LoRA actor and a LoRA critic with its value head) on a random model of the target
architecture's width, on CUDA, offline; it prints the peak memory and the tokens per second beside the
memory plan's estimate for the same model and batch (`scale_up.memory`).

    python -m scale_up.gpu_step                      # 27B width (5120 hidden, 152,064 vocabulary), 4 layers, bf16
    python -m scale_up.gpu_step --layers 2 --hidden 64 --intermediate 128 --vocab 256 --device cpu   # a smoke run

Why not verl's own FSDP workers: the GPU machines lent here are offline with at most 64 MiB of code carried in,
so vLLM (which verl's rollout needs) cannot travel; this is the largest part of the path that runs without it:
the kit's `rsi_lite.rpr.update.update` (what verl's trainer replaces, with the same estimator) at the target
width. Its critic is a LoRA critic, where the launched config's is full weights (configs/rsi_27b.yaml): a
full-weight critic's fp32 states for even 4 layers at this width (~3 B parameters with the embeddings, 16 bytes
each) would not fit one GPU beside the actor, which is what FSDP over 32 GPUs is for; the critic's own memory on
the cluster is `scale_up.memory`'s estimate, not this script's. Needs torch, transformers and peft (the GPU image
has them) and this checkout on PYTHONPATH.
Not run yet: no GPU has been lent to the sessions that wrote it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def small_tokenizer(path, words: int = 200):
    """A word-level tokenizer with ChatML's special tokens and template, saved to `path` (no model hub)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = ["<pad>", "<|im_start|>", "<|im_end|>", "<unk>", "system", "user", "assistant", "\n"]
    vocab += [f"w{i}" for i in range(words)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<|im_end|>",
                                   unk_token="<unk>", additional_special_tokens=["<|im_start|>"])
    fast.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    fast.save_pretrained(path)
    return fast


def random_model(path: Path, *, layers: int, hidden: int, intermediate: int, heads: int, kv_heads: int,
                 vocab: int) -> Path:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    small_tokenizer(path)
    torch.manual_seed(0)
    cfg = Qwen2Config(hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=kv_heads, vocab_size=vocab,
                      tie_word_embeddings=False, architectures=["Qwen2ForCausalLM"])
    with torch.device("meta"):
        Qwen2ForCausalLM(cfg)  # the shape check, before any memory is spent
    Qwen2ForCausalLM(cfg).to(torch.bfloat16).save_pretrained(path)
    return path


def episodes(n: int, tokens: int, vocab: int, turns: int = 4, seed: int = 0) -> list:
    """`n` synthetic episodes of `tokens` tokens: `turns` actions (a quarter of the tokens) between observations,
    each with a reward, as the rollout engine records them."""
    import random

    from rsi_lite.rollout.trajectory import Trajectory

    rng = random.Random(seed)
    out = []
    for i in range(n):
        ids = [rng.randrange(8, vocab) for _ in range(tokens)]
        mask, spans = [0] * tokens, []
        width = tokens // (4 * turns)
        for k in range(turns):
            start = (k + 1) * tokens // (turns + 1)
            spans.append([start, start + width])
            mask[start:start + width] = [1] * width
        lps = [-rng.random() if m else 0.0 for m in mask]
        r = rng.random()
        out.append(Trajectory(task=f"t{i}", task_path="", suite="gpu", family="gpu", difficulty="easy",
                              harness="plain", action_format="json", policy="base", seed=i, system="", messages=[],
                              token_ids=ids, action_mask=mask, logprobs=lps, turn_spans=spans, finish_reason="complete",
                              turns=turns, verifier={}, rewards={"spr": r, "s": float(r > .5), "fdr": r},
                              tokens={"total": tokens, "generated": sum(mask)}, timings={},
                              sampler={"backend": "vllm", "temperature": 1.0, "top_p": 1.0}))
    return out


def main(argv=None) -> dict:
    import torch

    from rsi_lite.policy.critic import add_critic
    from rsi_lite.policy.model import PolicyConfig, load_policy
    from rsi_lite.rpr.config import RPRConfig
    from rsi_lite.rpr.stage import make_optimizers
    from rsi_lite.rpr.update import update

    from .memory import Arch

    ap = argparse.ArgumentParser(prog="python -m scale_up.gpu_step")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=5120)
    ap.add_argument("--intermediate", type=int, default=22016)
    ap.add_argument("--heads", type=int, default=40)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=152064)
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=8192, help="tokens of each episode")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args(argv)
    dtype = "bfloat16" if args.device == "cuda" else "float32"
    tmp = tempfile.TemporaryDirectory()
    path = random_model(Path(tmp.name), layers=args.layers, hidden=args.hidden, intermediate=args.intermediate,
                        heads=args.heads, kv_heads=args.kv_heads, vocab=args.vocab)
    pcfg = PolicyConfig(model=str(path), quantization="lora", dtype=dtype, device=args.device)
    policy = add_critic(load_policy(pcfg))
    cfg = RPRConfig(model=str(path), dtype=dtype, minibatch=1, accumulate=0, actor_lr=5e-6, critic_lr=1.5e-5)
    optims = make_optimizers(policy, cfg)
    trajs = episodes(args.episodes, args.tokens, args.vocab)
    if args.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    rows, times = [], []
    for step, joint in enumerate([False, True, True]):  # a critic-only step, then two joint ones
        t = time.perf_counter()
        rows.append(update(policy, trajs, cfg, optims, train_actor=joint, step=step))
        if args.device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    arch = Arch(args.layers, args.hidden, args.intermediate, args.heads, args.kv_heads, args.vocab, False)
    s, L, h = args.tokens, args.layers, args.hidden
    # scale_up.memory's terms for one GPU: the base in bf16, actor and critic LoRA states, one episode's activations
    plan_gb = (arch.params() * 2 + 2 * 16 * arch.lora_params(pcfg.lora_r) + L * s * h * 2
               + s * (12 * h + 6 * args.intermediate) * 2 + s * args.vocab * 6) / 1e9
    out = {"device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
           "params_B": arch.params() / 1e9, "episode_tokens": s, "episodes": args.episodes,
           "update_s": [round(x, 2) for x in times],
           "tokens_per_s_joint": round(args.episodes * s / min(times[1:]), 1),
           "peak_gb": round(torch.cuda.max_memory_allocated() / 1e9, 2) if args.device == "cuda" else None,
           "plan_gb": round(plan_gb, 2),
           "loss_policy": rows[-1].get("losses/policy"), "ratio_max": rows[-1].get("ratio/max"),
           "explained_variance": rows[-1].get("losses/explained_variance")}
    print(json.dumps(out))
    tmp.cleanup()
    return out


if __name__ == "__main__":
    main()
