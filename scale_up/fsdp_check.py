"""The kit's own SFT step and PPO update, sharded with FSDP2, against the same code in one process.

    torchrun --nproc_per_node=2 -m scale_up.fsdp_check --out sharded.json   # FSDP2 over gloo (CPU) or nccl
    python -m scale_up.fsdp_check --out single.json                         # one process, no sharding

Both run `rsi_lite.rsr.sft.train_sft` (three masked-SFT steps of the actor adapter) and
`rsi_lite.rpr_update.update` (two joint PPO updates of actor and critic) on a tiny Llama with LoRA
actor and critic adapters. Every rank takes its share of the batch; all examples have the
same length and mask, so the mean of the ranks' token means equals the one-process mean
and the losses must agree up to float error. Advantage whitening is off here (it would
normalise over each rank's share, not over the batch: at scale, whiten after an
all-reduce of the moments). `tests/test_scale_up.py` runs both and compares.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import zlib
from pathlib import Path

import torch

from .dist import finish, init, mean_over_ranks, shard


class _Tok:
    pad_token_id = 0
    eos_token_id = 0


def tiny_policy(seed: int = 0):
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    from rsi_lite.policy.critic import add_critic
    from rsi_lite.policy.model import Policy, PolicyConfig

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2)
    pcfg = PolicyConfig(quantization="lora", lora_r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    model = get_peft_model(LlamaForCausalLM(cfg), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                              task_type="CAUSAL_LM"), adapter_name="actor")
    pol = add_critic(Policy(model, _Tok(), pcfg, ["actor"]), seed=seed)
    for n, p in pol.model.named_parameters():  # LoRA B starts at 0; make the adapters non-trivial
        if "lora_B" in n:
            torch.nn.init.normal_(p, std=0.05, generator=torch.Generator().manual_seed(zlib.crc32(n.encode())))
    return pol


def data(n: int = 4, length: int = 24, seed: int = 1):
    from rsi_lite.trajectory import Trajectory
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


def run(rank: int, world: int) -> dict:
    from rsi_lite.ppo import PPOConfig
    from rsi_lite.rpr import RPRConfig, make_optimizers
    from rsi_lite.rpr_update import update
    from rsi_lite.rsr.sft import SFTConfig, train_sft

    examples, trajs = data()
    share = len(examples) // world
    mine = slice(rank * share, (rank + 1) * share)

    pol = tiny_policy()
    if world > 1:
        shard(pol, world)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "sft.jsonl"
        train_sft(pol, examples[mine], SFTConfig(epochs=3, lr=5e-3, batch_size=share, warmup_steps=1, seed=0, loop="kit"),
                  metrics_path=log)
        sft = [mean_over_ranks(json.loads(x)["losses/sft"], world) for x in log.read_text().splitlines()]

    pol = tiny_policy()
    if world > 1:
        shard(pol, world)
    cfg = RPRConfig(minibatch=share, actor_lr=5e-3, critic_lr=5e-3, ppo=PPOConfig(whiten_advantages=False))
    optims = make_optimizers(pol, cfg)
    ppo = []
    for _ in range(2):
        row = update(pol, trajs[mine], cfg, optims, train_actor=True)
        ppo.append({k: mean_over_ranks(row[k], world) for k in ("losses/policy", "losses/value")})
    return {"world": world, "sft": sft, "ppo": ppo}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    rank, world = init()
    try:
        result = run(rank, world)
    finally:
        finish(world)
    if rank == 0:
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
