"""What every minibatch of a PPO update is measured against, fixed before its first gradient step: the batch's
tensors from its trajectories (rewards on the right tokens, length groups), the "old" pass (the critic's values and
the actor's log-probabilities before the update), the advantages and returns by the configured estimator, the
rollout correction's weights and the reference's log-probabilities (`targets_for`). `rsi_lite.rpr.update` runs the
update against them, or reads the old pass from its own first epoch (`update.first_epoch_as_old_pass`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..algos.advantages import (
    ESTIMATORS,
    GROUP_ESTIMATORS,
    episode_advantages,
    group_ids,
    terminal_rewards,
    turn_start_values,
)
from ..algos.ppo import explained_variance, masked_whiten, truncated_is_weights
from ..rollout.trajectory import Trajectory

if TYPE_CHECKING:
    import torch

    from .config import RPRConfig


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


def minibatches(trajs: list[Trajectory], size: int) -> list[list[int]]:
    """Row indices in groups of `size`, episodes of similar length together (longest first).

    Each group is cut to its own widest episode, so a short episode never pays for the
    padding of a long one: on a real step (8 episodes of 165 to 820 tokens) grouping by length
    halves the tokens a forward pass runs over. The groups stay the same across PPO epochs
    (only their order is shuffled), so the "old" pass and the training pass see identical shapes."""
    order = sorted(range(len(trajs)), key=lambda i: -len(trajs[i].token_ids))
    return [order[s:s + size] for s in range(0, len(order), size)]


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


def targets_for(policy, batch: DeviceBatch, trajs: list[Trajectory], cfg: "RPRConfig", train_actor: bool):
    """The separate old pass and what follows from it, before any step: (Targets, the before-update metrics, the
    old values [B, T])."""
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
    return Targets(old_lp, adv, ret, is_w, ref_lp), row, old_v
