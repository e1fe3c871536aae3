"""The kit's own SFT step and PPO update, sharded with FSDP2, against the same code in one process.

    torchrun --nproc_per_node=2 -m scale_up.fsdp_check --out sharded.json   # FSDP2 over gloo (CPU) or nccl
    python -m scale_up.fsdp_check --out single.json                         # one process, no sharding
    ... --dtype bfloat16                                                    # a bf16 base, FSDP2 mixed precision

Both run `rsi_lite.rsr.sft.train_sft` (three masked-SFT steps of the actor adapter) and
`rsi_lite.rpr.update.update` (two joint PPO updates of actor and critic) on a tiny Llama with LoRA
actor and critic adapters. Every rank takes its share of the batch; all examples have the
same length and mask, so the mean of the ranks' token means equals the one-process mean
and the losses must agree up to float error (bfloat16's, with `--dtype bfloat16`). Advantages
are whitened with moments all-reduced over the ranks (`ppo.masked_whiten(..., across_ranks=True)`),
so each rank's share is whitened as the whole batch: per-rank whitening would change the losses.
`tests/scale_up/test_scale_up.py` runs both and compares.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import zlib
from pathlib import Path

import torch

from .dist import finish, init, leave, mean_over_ranks, shard


class _Tok:
    pad_token_id = 0
    eos_token_id = 0


def tiny_policy(seed: int = 0, dtype: str = "float32"):
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    from rsi_lite.policy.critic import add_critic
    from rsi_lite.policy.model import Policy, PolicyConfig, torch_dtype

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2)
    pcfg = PolicyConfig(quantization="lora", lora_r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], dtype=dtype)
    # the base in `dtype`; peft keeps the adapters float32 (as `rsi_lite.policy.model.load_policy` does)
    model = get_peft_model(LlamaForCausalLM(cfg).to(torch_dtype(dtype)), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                              task_type="CAUSAL_LM"), adapter_name="actor")
    pol = add_critic(Policy(model, _Tok(), pcfg, ["actor"]), seed=seed)
    for n, p in pol.model.named_parameters():  # LoRA B starts at 0; make the adapters non-trivial
        if "lora_B" in n:
            torch.nn.init.normal_(p, std=0.05, generator=torch.Generator().manual_seed(zlib.crc32(n.encode())))
    return pol


def data(n: int = 4, length: int = 24, seed: int = 1):
    from rsi_lite.rollout.trajectory import Trajectory
    from rsi_lite.rsr.clean import Example

    g = torch.Generator().manual_seed(seed)
    mask = [0] * 6 + [1] * 6 + [0] * 4 + [1] * 8
    examples, trajs = [], []
    for i in range(n):
        ids = torch.randint(1, 512, (length,), generator=g).tolist()
        examples.append(Example(f"t{i}", "f", "resolve", [], ids, mask, True))
        trajs.append(Trajectory(task=f"t{i}", task_path="", suite="pool", family="f", difficulty="easy",
                                harness="plain", action_format="bash", policy="x", seed=0, system="", messages=[],
                                token_ids=ids, action_mask=mask, logprobs=[-1.0 if m else 0.0 for m in mask],
                                turn_spans=[[6, 12], [16, 24]], finish_reason="complete", turns=2,
                                verifier={"strict": i % 2, "passed": 1, "total": 2},
                                rewards={"s": float(i % 2), "spr": float(i % 2) or 0.25, "fdr": 0.5},
                                tokens={"generated": 14}, timings={}))
    return examples, trajs


def run(rank: int, world: int, dtype: str = "float32") -> dict:
    from rsi_lite.algos.ppo import PPOConfig
    from rsi_lite.rpr.config import RPRConfig
    from rsi_lite.rpr.stage import make_optimizers
    from rsi_lite.rpr.update import update
    from rsi_lite.rsr.sft import SFTConfig, train_sft

    examples, trajs = data()
    share = len(examples) // world
    mine = slice(rank * share, (rank + 1) * share)

    pol = tiny_policy(dtype=dtype)
    if world > 1:
        shard(pol, world)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "sft.jsonl"
        train_sft(pol, examples[mine], SFTConfig(epochs=3, lr=5e-3, batch_size=share, warmup_steps=1, seed=0, loop="kit"),
                  metrics_path=log)
        sft = [mean_over_ranks(json.loads(x)["losses/sft"], world) for x in log.read_text().splitlines()]

    pol = tiny_policy(dtype=dtype)
    if world > 1:
        shard(pol, world)
    cfg = RPRConfig(minibatch=share, actor_lr=5e-3, critic_lr=5e-3, ppo=PPOConfig(whiten_advantages=True))
    optims = make_optimizers(pol, cfg)
    ppo = []
    for _ in range(2):
        row = update(pol, trajs[mine], cfg, optims, train_actor=True)
        ppo.append({k: mean_over_ranks(row[k], world) for k in ("losses/policy", "losses/value")})
    # whitened advantages make the first epoch's policy loss 0 by construction: what the actor's updates did shows
    # in its log-probabilities of the batch's actions afterwards
    from rsi_lite.policy.critic import token_logprobs

    ids = torch.tensor([t.token_ids for t in trajs[mine]])
    act = torch.tensor([t.action_mask for t in trajs[mine]])
    with torch.no_grad():
        lp = token_logprobs(pol, ids, torch.ones_like(ids), only=act)
    after = mean_over_ranks(float(lp.sum() / act.sum()), world)
    return {"world": world, "dtype": dtype, "sft": sft, "ppo": ppo, "actor_logprob_after_ppo": after,
            "whitened": whitened_rows(rank, world)}


WHITEN_ROWS = [[1.0, 2.0, 3.0, 0.0, 5.0, 8.0], [10.0, 20.0, 40.0, 80.0, 0.0, 3.0]]
WHITEN_MASK = [[1, 1, 1, 0, 1, 1], [1, 1, 1, 1, 0, 1]]


def whitened_rows(rank: int, world: int) -> list:
    """WHITEN_ROWS whitened with `across_ranks=True`, each rank holding its rows, gathered: one process's
    plain whitening of both rows if the moments really are all-reduced (the rows' moments differ a lot)."""
    from rsi_lite.algos.ppo import masked_whiten

    x, m = torch.tensor(WHITEN_ROWS), torch.tensor(WHITEN_MASK)
    rows = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
    mine = masked_whiten(x[rows], m[rows], across_ranks=True)
    if world == 1:
        return mine.tolist()
    parts = [torch.zeros_like(mine) for _ in range(world)]
    torch.distributed.all_gather(parts, mine)
    return torch.cat(parts).tolist()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", default="float32", help="the base's precision: float32 or bfloat16")
    a = ap.parse_args(argv)
    rank, world = init()
    try:
        result = run(rank, world, a.dtype)
    finally:
        finish(world)
    if rank == 0:
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    leave(world)


if __name__ == "__main__":
    main()
