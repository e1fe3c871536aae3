"""Masked supervised fine-tuning of the actor adapter on clean examples.

Loss: the negative log-likelihood of the model's own action tokens only,

    L = - sum_t m_t * log p(x_t | x_<t) / sum_t m_t

with m_t = 1 on action tokens and 0 on the system prompt, the instruction and the
observations (which the model never wrote). Only the actor's LoRA weights train; a critic
adapter on the same base, when there is one, is left exactly as it was.

Two loops, one loss (`SFTConfig.loop`):

- `trl` (the default): TRL's `SFTTrainer` on a pre-tokenized dataset, the stored ids as `input_ids` and the
  action mask as `completion_mask` (`completion_only_loss`), so TRL sets every other label to -100 and
  transformers' causal-LM loss is exactly the masked NLL above (the mean over the batch's mask-1 tokens; a
  test checks the trained tokens and one step against the kit's loop). The optimizer and schedule are the
  kit's, handed to the trainer.
  (TRL's *assistant-only* loss would not do: it finds assistant spans through `{% generation %}` markers,
  which SmolLM2's chat template lacks, and re-tokenizes the text.)
- `kit`: the same optimisation as a plain loop, for FSDP2 under `scale_up/` (the trainer would wrap the
  sharded model again) and for a machine without TRL.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..timing import CLOCK
from ..tracking import Curves


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
    loop: str = "trl"
    """'trl': TRL's SFTTrainer (module docstring); 'kit': the plain loop (what `scale_up/` runs under FSDP2)."""
    report_to: str = "none"
    """'tensorboard': each step's loss, gradient norm and learning rate also to STAGE/tensorboard/ (`tracking`);
    metrics.jsonl always."""

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
    if cfg.loop not in ("trl", "kit"):
        raise ValueError(f"SFTConfig.loop: {cfg.loop!r} is neither 'trl' nor 'kit'")
    model, tok = policy.model, policy.tokenizer
    kept = [e for e in examples if len(e.input_ids) <= cfg.max_len and sum(e.loss_mask)]
    params = trainable_actor_parameters(model)
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(kept) / cfg.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, cfg.warmup_steps)))
    curves = Curves(cfg.report_to, Path(metrics_path).parent / "tensorboard" if metrics_path else None)
    if cfg.loop == "trl" and kept:
        t0 = time.monotonic()
        with CLOCK.phase("train/sft"):
            log = _train_trl(policy, kept, cfg, opt, sched, progress, curves)
        return _finish(model, kept, examples, cfg, log, metrics_path, t0, curves)
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
                curves.add(row, step)
                bar.update(1)
    bar.close()
    return _finish(model, kept, examples, cfg, log, metrics_path, t0, curves)


def _finish(model, kept, examples, cfg: SFTConfig, log: list[dict], metrics_path, t0: float, curves) -> dict:
    model.eval()
    curves.close()
    if metrics_path is not None:
        Path(metrics_path).write_text("".join(json.dumps(r) + "\n" for r in log))
    return {"examples": len(kept), "left_out_too_long": len(examples) - len(kept), "steps": len(log),
            "loop": cfg.loop if kept else "kit", "train_tokens": sum(sum(e.loss_mask) for e in kept) * cfg.epochs,
            "first_loss": log[0]["losses/sft"] if log else None, "last_loss": log[-1]["losses/sft"] if log else None,
            "wall_s": round(time.monotonic() - t0, 1)}


def _bar_only_callback():
    from transformers import ProgressCallback

    class BarOnly(ProgressCallback):
        """transformers' progress bar without the log dict it writes under the bar at every step."""

        def on_log(self, args, state, control, logs=None, **kwargs):
            pass

    return BarOnly


def _train_trl(policy, kept: list, cfg: SFTConfig, opt, sched, progress: bool, curves) -> list[dict]:
    """The masked SFT on TRL's SFTTrainer: stored ids and action masks in, the kit's optimizer and schedule; the
    rows of metrics.jsonl (and `curves`) from its logs."""
    import tempfile
    import warnings

    from datasets import Dataset
    from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled
    from transformers import PrinterCallback, ProgressCallback, TrainerCallback
    from trl import SFTConfig as TRLSFTConfig
    from trl import SFTTrainer

    model, tok = policy.model, policy.tokenizer
    data = Dataset.from_list([{"input_ids": list(e.input_ids), "completion_mask": list(e.loss_mask)} for e in kept])
    per_epoch = math.ceil(len(kept) / cfg.batch_size)
    log: list[dict] = []
    t0 = time.monotonic()

    class Rows(TrainerCallback):  # the rows of metrics.jsonl, as the kit's loop writes them
        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "loss" in logs:
                step = state.global_step
                log.append({"step": step, "epoch": (step - 1) // per_epoch, "losses/sft": round(float(logs["loss"]), 5),
                            "grad_norm": round(float(logs.get("grad_norm", 0.0)), 4),
                            "lr": float(logs.get("learning_rate", 0.0)), "elapsed_s": round(time.monotonic() - t0, 2)})
                curves.add(log[-1], step)

    with tempfile.TemporaryDirectory(prefix="rsi-lite-sft-") as tmp, warnings.catch_warnings():
        # TRL's config defaults `gradient_checkpointing` to True, under the name transformers now deprecates: off
        # here (the kit's examples are short), and the deprecation is not the reader's to act on
        warnings.filterwarnings("ignore", message="`gradient_checkpointing` is deprecated", category=FutureWarning)
        args = TRLSFTConfig(gradient_checkpointing=False,
            output_dir=tmp, num_train_epochs=cfg.epochs,
            per_device_train_batch_size=cfg.batch_size, max_grad_norm=cfg.grad_clip, seed=cfg.seed,
            data_seed=cfg.seed, logging_steps=1, save_strategy="no", report_to="none",
            completion_only_loss=True, max_length=None, packing=False, use_cpu=model.device.type == "cpu",
            dataloader_num_workers=0, disable_tqdm=not progress, bf16=False, fp16=False)
        bars = is_progress_bar_enabled()
        disable_progress_bar()  # "Building labels" for a few dozen examples: noise in a notebook
        try:
            trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tok,
                                 optimizers=(opt, sched), callbacks=[Rows()])
        finally:
            if bars:
                enable_progress_bar()
        # every step's log dict is in metrics.jsonl: neither printed (without tqdm) nor written under the bar
        trainer.remove_callback(PrinterCallback)
        if progress:
            trainer.remove_callback(ProgressCallback)
            trainer.add_callback(_bar_only_callback()())
        trainer.train()
    return log
