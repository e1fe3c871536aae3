"""The critic: a LoRA adapter of its own plus a scalar value head, on the same frozen base as the actor.

    values(policy, ids, attention) -> [B, T]   one value per token (read on action tokens)
    token_logprobs(policy, ids, attention, only=mask) -> [B, T]   log p_actor(token t | tokens < t) where
                                                   `only` is 1 (all tokens by default), 0 elsewhere

Actor and critic share only the frozen base: the actor's LoRA weights, the critic's LoRA
weights and the value head are three disjoint sets, so the actor can be frozen while the
critic trains (the warm-up) and either can be saved, inherited or reset on its own.

Switching adapters: peft's `set_adapter` also flips `requires_grad` on the adapters, which
would silently change what a later backward pass reaches; `using_adapter` switches only
which adapter the layers apply, and leaves gradients to the caller.
"""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from pathlib import Path

from ..records import read_json

CRITIC = "critic"
ACTOR = "actor"
REFERENCE = "reference"
"""A frozen copy of the actor a refinement stage started from (`add_reference`), for `RPRConfig.ref_kl`."""


@contextmanager
def using_adapter(model, name: str):
    """Route every LoRA layer through adapter `name` inside the block (gradient flags untouched)."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    layers = [m for m in model.modules() if isinstance(m, BaseTunerLayer)]
    before = [m._active_adapter for m in layers]
    for m in layers:
        if name not in m.lora_A:
            raise KeyError(f"no adapter {name!r} on this model (have: {', '.join(m.lora_A)})")
        m._active_adapter = [name]
    try:
        yield
    finally:
        for m, b in zip(layers, before):
            m._active_adapter = b


def add_critic(policy, *, r: int | None = None, alpha: int | None = None, seed: int = 0, path: str | Path | None = None):
    """Attach a critic adapter and value head to `policy` (fresh, or loaded from `path`); return the policy."""
    import torch
    from peft import LoraConfig

    from .model import quiet_peft

    cfg = policy.config
    if CRITIC in policy.adapters:
        raise ValueError("the policy already has a critic")
    torch.manual_seed(seed)
    with quiet_peft():
        if path is not None:
            path = Path(path)
            meta = read_json(path / "critic.json")
            policy.model.load_adapter(str(path), adapter_name=CRITIC, is_trainable=True)
        else:
            meta = {"hidden_size": policy.model.config.hidden_size}
            policy.model.add_adapter(CRITIC, LoraConfig(r=r or cfg.lora_r, lora_alpha=alpha or cfg.lora_alpha,
                                                        lora_dropout=0.0, target_modules=cfg.target_modules,
                                                        task_type="CAUSAL_LM"))
    head = torch.nn.Linear(meta["hidden_size"], 1)
    if path is not None:
        head.load_state_dict(torch.load(path / "value_head.pt", weights_only=True))
    else:
        # Near-constant values to start with. torch's default init gives values that vary by about 1 from
        # token to token (last hidden states have norm ~50 in the 135M model), while the returns of a batch
        # of mostly failed episodes vary by a few hundredths: explained variance then starts in the
        # hundreds below zero (docs/history.md) and says nothing about learning. A small random head (not a
        # zero one, which would zero the first step's gradient into the critic's LoRA weights) starts near
        # 0; the bias is set to the first batch's mean reward by `rpr.init_value_bias`.
        torch.nn.init.normal_(head.weight, std=0.01 / math.sqrt(meta["hidden_size"]))
        torch.nn.init.zeros_(head.bias)
    policy.value_head = head.to(next(policy.model.parameters()).device)
    policy.critic_fresh = path is None
    policy.adapters.append(CRITIC)
    # peft's add/load_adapter may have re-activated an adapter; the actor stays the one generating
    policy.model.base_model.set_adapter(ACTOR)
    return policy


def add_reference(policy, init: str):
    """Attach a frozen copy of the stage's incoming actor as adapter REFERENCE: the saved adapter in directory
    `init`, or for 'base' a fresh adapter (LoRA's B starts at 0, so it computes the base model). Its weights are
    never trainable (`set_trainable` frees only the actor's and the critic's); returns the policy."""
    from peft import LoraConfig

    from .model import quiet_peft

    if REFERENCE in policy.adapters:
        raise ValueError("the policy already has a reference")
    cfg = policy.config
    with quiet_peft():
        if init == "base":
            policy.model.add_adapter(REFERENCE, LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=0.0,
                                                           target_modules=cfg.target_modules, task_type="CAUSAL_LM"))
        else:
            policy.model.load_adapter(str(init), adapter_name=REFERENCE, is_trainable=False)
    for n, p in policy.model.named_parameters():
        if f".{REFERENCE}." in n:
            p.requires_grad_(False)
    policy.adapters.append(REFERENCE)
    policy.model.base_model.set_adapter(ACTOR)
    return policy


def critic_parameters(policy) -> list:
    return [p for n, p in policy.model.named_parameters() if "lora_" in n and f".{CRITIC}." in n] + \
        list(policy.value_head.parameters())


def actor_parameters(policy) -> list:
    return [p for n, p in policy.model.named_parameters() if "lora_" in n and f".{ACTOR}." in n]


def set_trainable(policy, *, actor: bool, critic: bool) -> None:
    """Freeze or unfreeze the actor and the critic independently; the base is always frozen."""
    for p in policy.model.parameters():
        p.requires_grad_(False)
    for p in actor_parameters(policy):
        p.requires_grad_(actor)
    for p in critic_parameters(policy):
        p.requires_grad_(critic)


def values(policy, input_ids, attention_mask):
    """[B, T] values: the critic adapter's last hidden state through the value head."""
    with using_adapter(policy.model, CRITIC):
        # logits_to_keep=1: the value head reads hidden states; [B, T, vocab] logits would be wasted memory
        out = policy.model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True,
                           logits_to_keep=1)
    # float32 values whatever the compute precision (under FSDP2's bf16 mixed precision the head computes in bf16)
    return policy.value_head(out.hidden_states[-1].float()).squeeze(-1).float()


def gather_logprobs(logits, next_ids, temperature: float = 1.0):
    """[B, N] log-probability of each of `next_ids` [B, N] under the tempered softmax of the logits [B, N, V] that
    predict it: log softmax(z / T) at the chosen token, in fp32 whatever the logits' precision."""
    import torch

    logits = logits.float()
    if temperature != 1.0:
        logits = logits / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, next_ids.unsqueeze(-1)).squeeze(-1)


def token_logprobs(policy, input_ids, attention_mask, temperature: float = 1.0, only=None, adapter: str = ACTOR):
    """[B, T] log-probability of each token under the actor (or another adapter: `adapter`) given the tokens before
    it (0 at position 0).

    `only` ([B, T], 1 where a log-probability is wanted, e.g. the action mask): the vocabulary
    projection and softmax run only on the columns some row needs, and every other entry is 0.
    That is most of the memory of a PPO step: [B, T, vocab] fp32 logits are 0.6 GB for 4 rows
    of 820 tokens with SmolLM2's 49,152-token vocabulary, and a softmax keeps a second copy.
    """
    import torch

    T = input_ids.shape[1]
    want = torch.ones_like(input_ids) if only is None else only
    targets = want[:, 1:].bool().any(0).nonzero().squeeze(-1) + 1  # token columns to score
    out = torch.zeros(input_ids.shape, dtype=torch.float32, device=input_ids.device)
    if T < 2 or targets.numel() == 0:
        return out
    with using_adapter(policy.model, adapter):
        logits = policy.model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=targets - 1).logits
    lp = gather_logprobs(logits, input_ids[:, targets], temperature)
    out = out.index_copy(1, targets, lp)
    return out if only is None else out * want


def save_critic(policy, path: Path) -> Path:
    """The critic adapter and value head in `path` (written to a temp dir, then renamed)."""
    import torch

    from .model import save_adapter

    def head(d: Path) -> None:
        torch.save(policy.value_head.state_dict(), d / "value_head.pt")
        (d / "critic.json").write_text(json.dumps({"hidden_size": policy.value_head.in_features}) + "\n")

    return save_adapter(policy, CRITIC, path, head)
