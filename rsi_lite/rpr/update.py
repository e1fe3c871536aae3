"""One PPO (or critic-only) update of an RPR stage: the batch's tensors, its advantages, minibatches in a seeded
order, and the update itself (`update`), which `rsi_lite.rpr.stage.run_rpr` calls once a step.
"""

from __future__ import annotations

import random
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..algos.advantages import (
    ESTIMATORS,
    GROUP_ESTIMATORS,
    episode_advantages,
    group_ids,
    terminal_rewards,
    turn_start_values,
)
from ..algos.ppo import explained_variance, masked_whiten, ppo_loss, truncated_is_weights, value_loss
from ..rollout.trajectory import Trajectory
from .replay import replay_backward

if TYPE_CHECKING:
    import torch

    from .config import RPRConfig


# ---------------------------------------------------------------- tensors from trajectories

def turn_reward_deltas(rewards: list[float]) -> list[float]:
    """Each turn's reward under potential-based shaping with the verdict as the potential: r_t = R_t - R_(t-1)
    (R_0 = 0). They add up to the episode's reward; a turn that makes the checks pass earns it, one that breaks
    them after loses it, one that changes nothing gets 0 (Ng, Harada & Russell 1999: the optimal policy is the
    same as under the final reward alone).

    >>> turn_reward_deltas([0.0, 1.0, 1.0, 0.25])
    [0.0, 1.0, 0.0, -0.75]
    """
    return [r - (rewards[i - 1] if i else 0.0) for i, r in enumerate(rewards)]


def batch_tensors(trajs: list[Trajectory], reward: str, pad_id: int, timing: str = "final",
                  unparsed_penalty: float = 0.0):
    """Right-padded ids, attention, action mask, rollout log-probs and token rewards [B, T]. timing 'final': the
    episode's reward on its last action token; 'turn': each action's `turn_reward_deltas` on its last token
    (episodes rolled out with `verify_turns`; one without a verdict per action keeps the final reward).
    `unparsed_penalty` p > 0: each action the harness could not parse (`eval.turns.reply_kinds`) also earns -p on its last
    token (`RPRConfig.unparsed_penalty`)."""
    import torch

    width = max(len(t.token_ids) for t in trajs)
    B = len(trajs)
    ids = torch.full((B, width), pad_id, dtype=torch.long)
    att = torch.zeros((B, width), dtype=torch.long)
    mask = torch.zeros((B, width), dtype=torch.long)
    lps = torch.zeros((B, width))
    for i, t in enumerate(trajs):
        n = len(t.token_ids)
        ids[i, :n] = torch.tensor(t.token_ids)
        att[i, :n] = 1
        mask[i, :n] = torch.tensor(t.action_mask)
        lps[i, :n] = torch.tensor(t.logprobs)
    rewards = terminal_rewards(torch.tensor([float(t.rewards[reward]) for t in trajs]), mask)
    if timing == "turn":
        for i, t in enumerate(trajs):
            per_turn = t.turn_rewards.get(reward, [])
            if per_turn and len(per_turn) == len(t.turn_spans):
                rewards[i] = 0.0
                for (_, end), r in zip(t.turn_spans, turn_reward_deltas(per_turn)):
                    rewards[i, end - 1] = r
    elif timing != "final":
        raise ValueError(f"RPRConfig.reward_timing: {timing!r} is neither 'final' nor 'turn'")
    if unparsed_penalty:
        from ..eval.turns import reply_kinds

        for i, t in enumerate(trajs):
            for (_, end), kind in zip(t.turn_spans, reply_kinds(t)):
                if kind == "unparsed":
                    rewards[i, end - 1] -= unparsed_penalty
    return ids, att, mask, lps, rewards


def estimator(cfg: "RPRConfig"):
    """The advantage estimator `cfg.estimator` names (`rsi_lite.algos.advantages.ESTIMATORS`)."""
    try:
        return ESTIMATORS[cfg.estimator]
    except KeyError:
        raise ValueError(f"RPRConfig.estimator: {cfg.estimator!r} is not one of {', '.join(ESTIMATORS)}") from None


def advantages_for(cfg: "RPRConfig", rewards, values, mask):
    """(advantages, returns), [B, T], by the estimator `cfg.estimator` names, with `cfg.gamma_turn` and
    `cfg.lam_turn` as its discount and trace decay, reading the critic's values where `cfg.value_at` says."""
    import torch

    done = torch.ones(values.shape[0], dtype=torch.bool)  # every episode ends with the verifier's verdict
    if cfg.value_at == "turn":  # one value, and so one advantage, per turn
        values = turn_start_values(values, mask)
    return estimator(cfg)(rewards, values, mask, done, cfg.gamma_turn, cfg.lam_turn)


def group_advantages(cfg: "RPRConfig", trajs: list[Trajectory], mask):
    """The critic-free estimators' (advantages, returns), [B, T]: each episode's `cfg.reward` judged against the
    other episodes of its task in this batch (`GROUP_ESTIMATORS[cfg.estimator]`), on all its action tokens; the
    returns are 0 (no critic learns from them). Also the share of episodes whose group's rewards are all equal
    (advantage 0: no signal), `groups/uninformative`."""
    import torch

    r = torch.tensor([float(t.rewards[cfg.reward]) for t in trajs])
    g = group_ids([t.task for t in trajs])
    per_episode = GROUP_ESTIMATORS[cfg.estimator](r, g)
    seen: dict[str, set] = {}
    for t in trajs:
        seen.setdefault(t.task, set()).add(float(t.rewards[cfg.reward]))
    uninformative = sum(len(seen[t.task]) == 1 for t in trajs) / len(trajs)
    adv = episode_advantages(per_episode, mask.cpu()).to(mask.device)
    return adv, torch.zeros_like(adv), {"groups/uninformative": uninformative, "groups/count": int(g.max()) + 1}


def rollout_correction(cfg: "RPRConfig", trajs: list[Trajectory]) -> bool:
    """Whether the update weights the policy loss by the rollout correction (`RPRConfig.rollout_correction`, whose
    docstring gives the reasons): 'on' and 'off' as said; 'auto' on when any episode's actions came from another
    engine than the policy's own model (transformers, native), or from it sampling at a temperature other than 1
    (greedy aside) or with top_p < 1. Each episode's `Trajectory.sampler` says how it was sampled; one without it is judged by
    `cfg.rollout` (its 'auto' backend read as transformers, the local default)."""
    if cfg.rollout_correction != "auto":
        return cfg.rollout_correction == "on"
    fallback = {"backend": cfg.rollout.generation_backend, "temperature": cfg.rollout.temperature,
                "top_p": cfg.rollout.top_p}
    for t in trajs:
        s = {**fallback, **t.sampler}
        if s["backend"] not in ("transformers", "native", "auto"):
            return True
        if s["temperature"] > 0 and (s["temperature"] != 1.0 or s["top_p"] < 1.0):
            return True
    return False


def minibatch_order(groups: list, seed: int, step: int, epoch: int) -> list:
    """The order the minibatches of one epoch are trained in: a shuffle seeded by the run seed, the step and
    the epoch, so that neither two steps nor two seeds see the same order."""
    return random.Random(f"minibatches/{seed}/{step}/{epoch}").sample(groups, len(groups))


def minibatches(trajs: list[Trajectory], size: int) -> list[list[int]]:
    """Row indices in groups of `size`, episodes of similar length together (longest first).

    Each group is cut to its own widest episode, so a short episode never pays for the
    padding of a long one: on a real step (8 episodes of 165 to 820 tokens) grouping by length
    halves the tokens a forward pass runs over. The groups stay the same across PPO epochs
    (only their order is shuffled), so the "old" pass and the training pass see identical shapes."""
    order = sorted(range(len(trajs)), key=lambda i: -len(trajs[i].token_ids))
    return [order[s:s + size] for s in range(0, len(order), size)]


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


# ---------------------------------------------------------------- the update, in CleanRL's order

@dataclass
class DeviceBatch:
    """One update's batch on the model's device: the [B, T] tensors of `batch_tensors` and its length groups
    (`minibatches`) as (row indices, width)."""

    ids: "torch.Tensor"
    att: "torch.Tensor"
    mask: "torch.Tensor"
    rollout_lps: "torch.Tensor"
    rewards: "torch.Tensor"
    groups: list


@dataclass
class Targets:
    """What every minibatch's losses are measured against, fixed before the first gradient step: the actor's
    "old" log-probabilities (None in a critic-only update), the advantages, the returns and the rollout
    correction's token weights (None where it is off), all [B, T]."""

    old_lp: "torch.Tensor | None"
    adv: "torch.Tensor"
    ret: "torch.Tensor"
    is_w: "torch.Tensor | None" = None
    ref_lp: "torch.Tensor | None" = None
    """The incoming actor's log-probabilities (`RPRConfig.ref_kl`), None where there is no KL penalty."""


def device_batch(policy, trajs: list[Trajectory], cfg: "RPRConfig") -> DeviceBatch:
    """The batch's tensors on the model's device, and its length groups."""
    import torch

    tok = policy.tokenizer
    ids, att, mask, rollout_lps, rewards = (x.to(policy.model.device) for x in batch_tensors(
        trajs, cfg.reward, tok.pad_token_id if tok.pad_token_id is not None else 0, cfg.reward_timing,
        cfg.unparsed_penalty))
    groups = [(torch.tensor(g, device=ids.device), max(len(trajs[i].token_ids) for i in g))
              for g in minibatches(trajs, cfg.minibatch)]
    return DeviceBatch(ids, att, mask, rollout_lps, rewards, groups)


def old_pass(policy, batch: DeviceBatch, train_actor: bool, critic: bool = True):
    """The critic's values and (joint update) the actor's log-probabilities before any step: (old_v, old_lp),
    [B, T], old_lp None in a critic-only update, old_v 0 without a critic (`critic` False: a critic-free
    estimator). Computed on the training groups' own widths, so the first minibatch's ratio is exactly 1."""
    import torch

    from ..policy.critic import token_logprobs, values

    ids, att, mask = batch.ids, batch.att, batch.mask
    old_v = torch.zeros(ids.shape, device=ids.device)
    old_lp = torch.zeros(ids.shape, device=ids.device) if train_actor else None
    with torch.no_grad():
        for mb, w in batch.groups:
            if critic:
                old_v[mb, :w] = values(policy, ids[mb, :w], att[mb, :w])
            if train_actor:
                old_lp[mb, :w] = token_logprobs(policy, ids[mb, :w], att[mb, :w], only=mask[mb, :w])
    return old_v, old_lp


def reference_pass(policy, batch: DeviceBatch):
    """[B, T] log-probabilities of the action tokens under the frozen incoming actor (`policy.critic.REFERENCE`)."""
    import torch

    from ..policy.critic import REFERENCE, token_logprobs

    ids, att, mask = batch.ids, batch.att, batch.mask
    ref = torch.zeros(ids.shape, device=ids.device)
    with torch.no_grad():
        for mb, w in batch.groups:
            ref[mb, :w] = token_logprobs(policy, ids[mb, :w], att[mb, :w], only=mask[mb, :w], adapter=REFERENCE)
    return ref


def reference_kl(lp, ref_lp, mask):
    """KL(pi || pi_ref) per action token by the k3 estimate exp(d) - 1 - d, d = ref_lp - lp (non-negative, unbiased
    for tokens sampled from pi), averaged over the action tokens.

    >>> import torch
    >>> round(float(reference_kl(torch.tensor([[0.0, -1.0]]), torch.tensor([[0.0, -2.0]]), torch.tensor([[0, 1]]))), 4)
    0.3679
    """
    from ..algos.ppo import masked_mean

    d = (ref_lp - lp) * mask
    return masked_mean(d.exp() - 1 - d, mask)


def before_update_metrics(batch: DeviceBatch, old_v, old_lp, ret) -> dict:
    """What the critic explained before the update, the returns' spread (what makes a large negative
    explained variance readable) and, in a joint update, how far the training forward's log-probabilities
    are from the rollout's own: `logprobs/rollout_gap`, the mean |old_lp - rollout_lp| over action tokens.
    The rollout correction's `tis/*` metrics sit beside it (`update`)."""
    mask = batch.mask
    on = mask.bool()
    row = {"losses/explained_variance_before": explained_variance(old_v, ret, mask),
           "returns/std": float(ret[on].float().std(unbiased=False)) if on.any() else float("nan")}
    if old_lp is not None:
        row["logprobs/rollout_gap"] = float(((old_lp - batch.rollout_lps).abs() * mask).sum() / mask.sum().clamp(min=1))
    return row


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
    old_v, old_lp = old_pass(policy, batch, train_actor, critic=cfg.uses_critic)
    if cfg.uses_critic:
        adv, ret = advantages_for(cfg, batch.rewards, old_v, batch.mask)
        row = before_update_metrics(batch, old_v, old_lp, ret)
    else:
        adv, ret, groups = group_advantages(cfg, trajs, batch.mask)
        row = {**before_update_metrics(batch, old_v, old_lp, ret), **groups}
    if train_actor and cfg.ppo.whiten_advantages and cfg.uses_critic:
        # whitened over the whole batch's action tokens, as the loss would over one minibatch of everything (the
        # group estimators' are not: they are already relative to their group, and grpo's scaled by it)
        adv = masked_whiten(adv, batch.mask)
    is_w = None
    if train_actor:
        # the rollout correction: the weights' statistics always, the weights in the loss only where it is on
        w, tis = truncated_is_weights(old_lp, batch.rollout_lps, batch.mask, cfg.ppo.tis_cap)
        on = rollout_correction(cfg, trajs)
        row.update({**tis, "tis/on": float(on)})
        is_w = w if on else None
    ref_lp = None
    if train_actor and cfg.ref_kl:
        ref_lp = reference_pass(policy, batch)
        row["kl/ref_before"] = float(reference_kl(old_lp, ref_lp, batch.mask))
    targets = Targets(old_lp, adv, ret, is_w, ref_lp)
    stats = []
    n_epochs = epochs or cfg.ppo_epochs
    seen = old_v.clone() if cfg.uses_critic else None
    draws = replay.draws(cfg.seed, step) if (replay is not None and train_actor and cfg.replay) else None
    with training(policy, actor=train_actor):
        for epoch in range(n_epochs):
            order = minibatch_order(batch.groups, cfg.seed, step, epoch)
            for chunk in optimizer_chunks(order, cfg.accumulate):
                stats += train_chunk(policy, optims, batch, chunk, targets, cfg, train_actor=train_actor,
                                     seen=seen if epoch == n_epochs - 1 else None,
                                     replay_rows=next(draws) if draws else None)
    out = {**row, **merged_stats(stats)}
    if cfg.uses_critic:
        # over the whole batch, each minibatch's values as its last epoch's step met them: a mean of per-minibatch
        # figures is not one (a minibatch of four successes has returns of almost no spread, so its figure can
        # read -1e4 while the critic is no worse than a constant)
        out["losses/explained_variance"] = explained_variance(seen, ret, batch.mask)
    else:
        out["losses/explained_variance"] = float("nan")  # no critic: nothing explained
    return out
