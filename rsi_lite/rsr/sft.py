"""Masked supervised fine-tuning of the actor adapter on clean examples.

Loss: the negative log-likelihood of the model's own action tokens only,

    L = - sum_t m_t * log p(x_t | x_<t) / sum_t m_t

with m_t = 1 on action tokens and 0 on the system prompt, the instruction and the
observations (which the model never wrote). Only the actor's LoRA weights train; a critic
adapter on the same base, when there is one, is left exactly as it was.

Why not TRL's SFTTrainer: its assistant-only loss finds the assistant spans through
`{% generation %}` markers in the chat template (SmolLM2's has none) and it tokenizes the
text itself, whereas our examples carry their stored token ids and masks already. The loop
below is the whole of what we need.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..timing import CLOCK


@dataclass
class SFTConfig:
    """Masked SFT hyper-parameters (sized for the 135M model on 2 CPU cores)."""

    epochs: int = 3
    """Passes over the dataset."""
    lr: float = 2e-4
    """AdamW learning rate of the actor's LoRA weights (constant after a short warm-up)."""
    batch_size: int = 4
    """Examples per optimizer step."""
    warmup_steps: int = 5
    """Linear learning-rate warm-up."""
    max_len: int = 1536
    """Longer examples are left out (and counted), never cut: a cut would train on a prompt that never existed."""
    grad_clip: float = 1.0
    """Max global gradient norm."""
    seed: int = 0
    """Shuffling seed."""

    def to_dict(self) -> dict:
        return asdict(self)


def masked_nll(logits, input_ids, loss_mask):
    """Mean NLL of the tokens where `loss_mask` is 1.

    logits [B, T, V], input_ids [B, T], loss_mask [B, T] -> scalar. Position t's logits
    predict token t+1, so the mask is read from position 1 on. Example: with a mask
    [0, 0, 1, 1] only tokens 2 and 3 count, predicted from logits 1 and 2.
    """
    import torch

    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    target = input_ids[:, 1:]
    m = loss_mask[:, 1:].float()
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return (nll * m).sum() / m.sum().clamp(min=1.0)


def trainable_actor_parameters(model) -> list:
    """The actor adapter's weights; every other parameter (base, critic) is frozen."""
    if hasattr(model, "set_adapter"):
        model.set_adapter("actor")
    params = []
    for name, p in model.named_parameters():
        mine = "lora_" in name and ".actor." in name
        p.requires_grad_(mine)
        if mine:
            params.append(p)
    if not params:
        raise ValueError("the policy has no 'actor' LoRA adapter to train")
    return params


def _batch(examples, pad_id: int):
    import torch

    width = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    att = torch.zeros((len(examples), width), dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, e in enumerate(examples):  # right padding: positions start at 0 for every row
        n = len(e.input_ids)
        ids[i, :n] = torch.tensor(e.input_ids)
        att[i, :n] = 1
        mask[i, :n] = torch.tensor(e.loss_mask)
    return ids, att, mask


def train_sft(policy, examples: list, cfg: SFTConfig | None = None, *, metrics_path: Path | None = None,
              progress: bool = False) -> dict:
    """Fine-tune the actor on `examples` (rsr.clean.Example); return a summary of the run."""
    import torch
    from tqdm.auto import tqdm

    cfg = cfg or SFTConfig()
    model, tok = policy.model, policy.tokenizer
    kept = [e for e in examples if len(e.input_ids) <= cfg.max_len and sum(e.loss_mask)]
    params = trainable_actor_parameters(model)
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(kept) / cfg.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, cfg.warmup_steps)))
    rng = random.Random(cfg.seed)
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    model.train()
    log, t0, step = [], time.monotonic(), 0
    bar = tqdm(total=cfg.epochs * steps_per_epoch, desc="sft", disable=not progress, leave=False)
    with CLOCK.phase("train/sft"):  # the optimisation alone, for the stage's wall breakdown
        for epoch in range(cfg.epochs):
            order = kept[:]
            rng.shuffle(order)
            for start in range(0, len(order), cfg.batch_size):
                ids, att, mask = (x.to(model.device) for x in _batch(order[start:start + cfg.batch_size], pad))
                loss = masked_nll(model(input_ids=ids, attention_mask=att).logits, ids, mask)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
                opt.step()
                sched.step()
                step += 1
                row = {"step": step, "epoch": epoch, "losses/sft": round(loss.item(), 5),
                       "grad_norm": round(float(norm), 4), "lr": sched.get_last_lr()[0],
                       "tokens": int(mask.sum()), "elapsed_s": round(time.monotonic() - t0, 2)}
                log.append(row)
                bar.update(1)
    bar.close()
    model.eval()
    if metrics_path is not None:
        Path(metrics_path).write_text("".join(json.dumps(r) + "\n" for r in log))
    return {"examples": len(kept), "left_out_too_long": len(examples) - len(kept), "steps": step,
            "train_tokens": sum(sum(e.loss_mask) for e in kept) * cfg.epochs,
            "first_loss": log[0]["losses/sft"] if log else None, "last_loss": log[-1]["losses/sft"] if log else None,
            "wall_s": round(time.monotonic() - t0, 1)}


def save_actor(policy, path: Path, state_dict: dict | None = None) -> Path:
    """Save the actor adapter so that `path/adapter_config.json` exists (written to a temp dir, then renamed)."""
    from ..policy.model import save_adapter

    return save_adapter(policy, "actor", path, state_dict=state_dict)
