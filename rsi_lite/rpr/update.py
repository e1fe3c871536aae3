"""One PPO (or critic-only) update of an RPR stage (`update`), which `rsi_lite.rpr.stage.run_rpr` calls once a
step: against the targets of `rsi_lite.rpr.targets` (the old pass, the advantages), minibatches in a seeded order,
their losses and optimizer steps; where the first epoch is one optimizer step its forwards are the old pass too.
"""

from __future__ import annotations

import random
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from ..algos.ppo import explained_variance, masked_whiten, ppo_loss, truncated_is_weights, value_loss
from ..rollout.trajectory import Trajectory
from .replay import replay_backward
from .targets import (
    DeviceBatch,
    Targets,
    advantages_for,
    before_update_metrics,
    device_batch,
    group_advantages,
    reference_kl,
    rollout_correction,
    targets_for,
)

if TYPE_CHECKING:
    from .config import RPRConfig


def minibatch_order(groups: list, seed: int, step: int, epoch: int) -> list:
    """The order the minibatches of one epoch are trained in: a shuffle seeded by the run seed, the step and
    the epoch, so that neither two steps nor two seeds see the same order."""
    return random.Random(f"minibatches/{seed}/{step}/{epoch}").sample(groups, len(groups))


def checkpointed(cfg: "RPRConfig", rows: int, width: int) -> bool:
    """Whether a minibatch of `rows` episodes cut to `width` tokens trains with gradient checkpointing: always
    under `cfg.gradient_checkpointing`, else once its padded size passes `cfg.checkpoint_tokens` (0: never).

    Kept activations grow with rows x width (and attention's with rows x width^2): without this one 4 x 1,417
    minibatch of the longest episodes can need several times the memory of the usual ones (docs/experiments.md, "Figures behind the code's choices")."""
    return cfg.gradient_checkpointing or 0 < cfg.checkpoint_tokens < rows * width


@contextmanager
def checkpointing(model):
    """Gradient checkpointing inside the block: the training forward keeps each layer's input only
    and recomputes the rest during backward (one more forward's compute, a fraction of the memory).
    Without it a PPO minibatch of long episodes holds gigabytes of activations per adapter (docs/experiments.md, "Figures behind the code's choices")."""
    # transformers 5 renamed the switch (the old name still works there, with a warning)
    name = "activation_checkpointing" if hasattr(model, "activation_checkpointing_enable") else "gradient_checkpointing"
    enable = getattr(model, f"{name}_enable", None)
    if enable is None:
        yield
        return
    enable(**{f"{name}_kwargs": {"use_reentrant": False}})
    try:
        yield
    finally:
        getattr(model, f"{name}_disable")()


@contextmanager
def training(policy, *, actor: bool):
    """The critic (and, with `actor`, the actor) trainable and the model in train mode inside the block;
    both frozen and the model in eval mode after it."""
    from ..policy.critic import set_trainable

    set_trainable(policy, actor=actor, critic=True)
    policy.model.train()
    try:
        yield
    finally:
        policy.model.eval()
        set_trainable(policy, actor=False, critic=False)


def optimizer_chunks(order: list, accumulate: int) -> list[list]:
    """One epoch's minibatches (in training order) cut into the runs whose gradients add up before one
    optimizer step: `accumulate` minibatches each, or all of them for 0 (`RPRConfig.accumulate`)."""
    size = accumulate if accumulate > 0 else len(order)
    return [order[i:i + size] for i in range(0, len(order), size)]


def minibatch_backward(policy, batch: DeviceBatch, mb, w: int, targets: Targets, cfg: "RPRConfig", *,
                       train_actor: bool, share: float, seen=None) -> dict:
    """The critic's loss and (joint update) the actor's PPO loss on one minibatch, cut to its width `w`, each
    back-propagated at `share` (its part of its chunk's action tokens, so a chunk's loss is its token mean);
    returns the minibatch's statistics. With `seen` (a [B, T] tensor) the critic's values of the minibatch are
    written into its rows, for the explained variance over the whole batch (`update`)."""
    from ..policy.critic import ACTOR, CRITIC, token_logprobs, using_adapter, values

    sl = (mb, slice(0, w))
    ids, att, mask, ret = batch.ids[sl], batch.att[sl], batch.mask[sl], targets.ret[sl]
    # Each backward runs inside its adapter's block: checkpointing recomputes the layers' forward during
    # backward, and that recomputation must route through the adapter the forward used.
    with checkpointing(policy.model) if checkpointed(cfg, len(mb), w) else nullcontext():
        if cfg.uses_critic:
            with using_adapter(policy.model, CRITIC):
                v = values(policy, ids, att)
                if seen is not None:
                    seen[sl] = v.detach().to(seen.dtype)
                vloss = cfg.ppo.vf_coef * value_loss(v, ret, mask)
                (share * vloss).backward()
        else:  # a critic-free estimator: no value to fit (the losses' value terms read 0)
            v = ret
        if not train_actor:
            return {"losses/value": float(vloss.detach()),
                    "losses/explained_variance": explained_variance(v.detach(), ret, mask)}
        with using_adapter(policy.model, ACTOR):
            lp = token_logprobs(policy, ids, att, only=mask)
            # the advantages are whitened (if at all) once over the whole batch (`update`), never per minibatch
            loss, stats = ppo_loss(lp, targets.old_lp[sl], targets.adv[sl], v.detach(), ret, mask,
                                   replace(cfg.ppo, whiten_advantages=False),
                                   is_weights=None if targets.is_w is None else targets.is_w[sl])
            if targets.ref_lp is not None:
                kl = reference_kl(lp, targets.ref_lp[sl], mask)
                loss = loss + cfg.ref_kl * kl
                stats["kl/ref"] = float(kl.detach())
            (share * loss).backward()  # v is detached: this reaches the actor only
    return stats


def optimizer_step(optims: dict, max_grad_norm: float, *, train_actor: bool) -> None:
    """Each optimizer's step on its gradients clipped to `max_grad_norm`; the actor's only in a joint update."""
    import torch

    for name, o in optims.items():
        if name == "actor" and not train_actor:
            continue
        torch.nn.utils.clip_grad_norm_([p for g in o.param_groups for p in g["params"]], max_grad_norm)
        o.step()


def train_chunk(policy, optims: dict, batch: DeviceBatch, chunk: list, targets: Targets, cfg: "RPRConfig", *,
                train_actor: bool, seen=None, replay_rows=None) -> list[dict]:
    """One optimizer step on a chunk of minibatches: their gradients added up, token-weighted (as one
    minibatch holding them all), and the replay term's on `replay_rows` (`rpr.replay`), then the step; returns
    each minibatch's statistics."""
    for o in optims.values():
        o.zero_grad(set_to_none=True)
    chunk_tokens = sum(float(batch.mask[mb, :w].sum()) for mb, w in chunk) or 1.0
    stats = [minibatch_backward(policy, batch, mb, w, targets, cfg, train_actor=train_actor,
                                share=float(batch.mask[mb, :w].sum()) / chunk_tokens, seen=seen)
             for mb, w in chunk]
    return replay_and_step(policy, optims, cfg, stats, replay_rows, train_actor=train_actor)


def replay_and_step(policy, optims: dict, cfg: "RPRConfig", stats: list[dict], replay_rows, *,
                    train_actor: bool) -> list[dict]:
    """The end of an optimizer step: the replay term's gradient on `replay_rows` (`rpr.replay`; none: nothing) added
    to the minibatches' (its NLL written into their `stats`), then the step."""
    if replay_rows:  # `update` draws them for a joint update only
        from ..policy.critic import ACTOR, using_adapter

        width = max(len(ids) for ids, _ in replay_rows)
        # the actor's adapter and the minibatches' checkpointing rule, for the same reasons as `minibatch_backward`
        with using_adapter(policy.model, ACTOR), (checkpointing(policy.model)
                                                  if checkpointed(cfg, len(replay_rows), width) else nullcontext()):
            nll = replay_backward(policy, replay_rows, cfg.replay)
        stats = [{**s, "losses/replay": nll} for s in stats]
    optimizer_step(optims, cfg.max_grad_norm, train_actor=train_actor)
    return stats


def merged_stats(stats: list[dict]) -> dict:
    """Every minibatch's statistics in one row: `ratio/min` and `ratio/max` over all of them, the others their
    means; NaNs are left out (a key that is NaN everywhere stays NaN)."""
    row = {}
    for k in stats[0]:
        vals = [s[k] for s in stats if s.get(k) == s.get(k)]  # drop NaN
        pick = {"ratio/min": min, "ratio/max": max}.get(k, lambda v: sum(v) / len(v))
        row[k] = pick(vals) if vals else float("nan")
    return row


def folds_old_pass(policy, cfg: "RPRConfig", order: list, train_actor: bool) -> bool:
    """Whether the first epoch's forwards can be the old pass (`RPRConfig.fold_old_pass`): one optimizer step in
    it (so every forward sees the rollout's weights), no KL penalty to a reference in a joint update (that path
    computes the reference's log-probabilities and its `kl/ref_before` from the old pass before any loss), and no
    dropout anywhere in the model (so a training forward equals the evaluation one)."""
    import torch

    if not cfg.fold_old_pass or len(optimizer_chunks(order, cfg.accumulate)) != 1 or (train_actor and cfg.ref_kl):
        return False
    m = policy.model
    dropout = any(isinstance(x, torch.nn.Dropout) and x.p > 0 for x in m.modules())
    return not dropout and not getattr(getattr(m, "config", None), "attention_dropout", 0.0)


def first_epoch_as_old_pass(policy, optims: dict, batch: DeviceBatch, trajs: list[Trajectory], cfg: "RPRConfig",
                            order: list, *, train_actor: bool, replay_rows=None):
    """The first epoch when it is one optimizer step (`folds_old_pass`): every critic forward of it gives the old
    values its minibatch's advantages and returns are computed from (each episode's are its own: the estimators
    work row by row), its value loss back-propagated at once; then the batch's advantages are whitened, and every
    actor forward gives the old log-probabilities (so its ratio is 1) beside its loss; then the step. The gradients
    are those of `train_chunk` after `targets_for`, two forwards over the batch fewer. Returns (Targets, the
    before-update metrics, the old values, the minibatches' statistics)."""
    import torch

    from ..policy.critic import ACTOR, CRITIC, token_logprobs, using_adapter, values

    ids, att, mask = batch.ids, batch.att, batch.mask
    for o in optims.values():
        o.zero_grad(set_to_none=True)
    total = sum(float(mask[mb, :w].sum()) for mb, w in order) or 1.0
    old_v = torch.zeros(ids.shape, device=ids.device)
    adv, ret = torch.zeros_like(old_v), torch.zeros_like(old_v)
    stats, groups = [], {}
    for mb, w in order if cfg.uses_critic else []:
        sl = (mb, slice(0, w))
        with checkpointing(policy.model) if checkpointed(cfg, len(mb), w) else nullcontext():
            with using_adapter(policy.model, CRITIC):
                v = values(policy, ids[sl], att[sl])
                old_v[sl] = v.detach()
                adv[mb], ret[mb] = advantages_for(cfg, batch.rewards[mb], old_v[mb], mask[mb])
                vloss = cfg.ppo.vf_coef * value_loss(v, ret[sl], mask[sl])
                (float(mask[sl].sum()) / total * vloss).backward()
        stats.append({"losses/value": float(vloss.detach()),
                      "losses/explained_variance": explained_variance(v.detach(), ret[sl], mask[sl])})
    if not cfg.uses_critic:
        adv, ret, groups = group_advantages(cfg, trajs, mask)
    old_lp = None
    if train_actor:
        if cfg.ppo.whiten_advantages and cfg.uses_critic:
            adv = masked_whiten(adv, mask)  # over the whole batch, as `targets_for`
        on, old_lp, stats = rollout_correction(cfg, trajs), torch.zeros_like(old_v), []
        for mb, w in order:
            sl = (mb, slice(0, w))
            with checkpointing(policy.model) if checkpointed(cfg, len(mb), w) else nullcontext():
                with using_adapter(policy.model, ACTOR):
                    lp = token_logprobs(policy, ids[sl], att[sl], only=mask[sl])
                    old_lp[sl] = lp.detach()
                    is_w = truncated_is_weights(old_lp[sl], batch.rollout_lps[sl], mask[sl], cfg.ppo.tis_cap)[0]
                    loss, st = ppo_loss(lp, old_lp[sl], adv[sl], old_v[sl] if cfg.uses_critic else ret[sl], ret[sl],
                                        mask[sl], replace(cfg.ppo, whiten_advantages=False),
                                        is_weights=is_w if on else None)
                    (float(mask[sl].sum()) / total * loss).backward()
            stats.append(st)
    stats = replay_and_step(policy, optims, cfg, stats, replay_rows, train_actor=train_actor)
    row = {**before_update_metrics(batch, old_v, old_lp, ret), **groups}
    is_w = None
    if train_actor:
        w, tis = truncated_is_weights(old_lp, batch.rollout_lps, mask, cfg.ppo.tis_cap)
        row.update({**tis, "tis/on": float(on)})
        is_w = w if on else None
    return Targets(old_lp, adv, ret, is_w), row, old_v, stats


def update(policy, trajs: list[Trajectory], cfg: "RPRConfig", optims: dict, *, train_actor: bool,
           epochs: int | None = None, step: int = 0, replay=None) -> dict:
    """One PPO (or critic-only) update on a batch of trajectories, its advantages from the critic (TB-GAE, GAE)
    or, for a critic-free estimator (`RPRConfig.uses_critic` False), from each task's group of episodes
    (`group_advantages`; no critic forward, loss or step); returns the update's metrics (losses, ratios,
    values). What the batch itself scored (`reward/mean`, `success/mean`, `tokens/generated`) is the stage's to
    log (`rsi_lite.rpr.stage.update_step`), the one owner of the batch's figures.

    In CleanRL's order: the batch's tensors, the old values and log-probabilities, the advantages, then per
    epoch the minibatches in a seeded order, their losses and the optimizer steps, and last the metrics.

    In a joint update the policy loss is weighted by the rollout correction where `rollout_correction` turns it
    on (`tis/on`; `tis/weight_mean` and `tis/truncated_frac` are logged either way, beside
    `logprobs/rollout_gap`).

    `replay` (an `rpr.replay.Replay`, with `cfg.replay` > 0): a joint update's optimizer steps also lower the
    replay examples' NLL (`losses/replay`). `step` (with `cfg.seed`) seeds the minibatch order and the replay's
    draws. The ratio's min and max are over every minibatch of every epoch, the other statistics their means; the
    first minibatch of the first epoch has ratio 1 by construction, the later ones show how far the earlier ones
    moved the actor.

    Memory: every forward runs on one minibatch, cut to its widest episode (`minibatches`); the
    actor's log-probabilities are computed on action tokens only; the critic's loss is
    back-propagated before the actor's forward pass starts (the two share no trainable weight,
    so the gradients are those of the summed loss); training passes use gradient checkpointing, always or on
    the minibatches too wide to train without it (`checkpointed`)."""
    batch = device_batch(policy, trajs, cfg)
    n_epochs = epochs or cfg.ppo_epochs
    draws = replay.draws(cfg.seed, step) if (replay is not None and train_actor and cfg.replay) else None
    order = minibatch_order(batch.groups, cfg.seed, step, 0)
    folded = folds_old_pass(policy, cfg, order, train_actor)
    stats, first = [], 0
    if not folded:
        targets, row, old_v = targets_for(policy, batch, trajs, cfg, train_actor)
    with training(policy, actor=train_actor):
        if folded:  # the first epoch is the old pass too (`RPRConfig.fold_old_pass`)
            targets, row, old_v, stats = first_epoch_as_old_pass(
                policy, optims, batch, trajs, cfg, order, train_actor=train_actor,
                replay_rows=next(draws) if draws else None)
            first = 1
        # with one epoch and the old pass folded, the values the step met are the old ones
        seen = old_v.clone() if cfg.uses_critic else None
        for epoch in range(first, n_epochs):
            order = minibatch_order(batch.groups, cfg.seed, step, epoch)
            for chunk in optimizer_chunks(order, cfg.accumulate):
                stats += train_chunk(policy, optims, batch, chunk, targets, cfg, train_actor=train_actor,
                                     seen=seen if epoch == n_epochs - 1 else None,
                                     replay_rows=next(draws) if draws else None)
    row["update/old_pass_folded"] = float(folded)
    out = {**row, **merged_stats(stats)}
    if cfg.uses_critic:
        # over the whole batch, each minibatch's values as its last epoch's step met them: a mean of per-minibatch
        # figures is not one (a minibatch of four successes has returns of almost no spread, so its figure can
        # read -1e4 while the critic is no worse than a constant)
        out["losses/explained_variance"] = explained_variance(seen, targets.ret, batch.mask)
    else:
        out["losses/explained_variance"] = float("nan")  # no critic: nothing explained
    return out
