"""TB-GAE on verl's tensors: the kit's own `terminal_rewards`, `tb_gae` and whitening, fed from verl's batch.

What verl hands the advantage step (its v1 trainer, `PPOTrainer._compute_advantage`), each [B, R] over the
response (R: the batch's longest response, right-padded):
  - `response_mask`: 1 on the model's own tokens, 0 on observation (tool / terminal output) tokens and padding;
  - `values`: the critic's value at each response token;
  - `token_level_scores` (from the agent loop's `rm_scores`): the episode's score on the response's LAST token,
    which in a multi-turn episode is often an observation token (mask 0), and extra fields per episode.

The kit's TB-GAE skips observation tokens, so a reward on one would be lost (verl's own GAE loses it too: its
recursion carries the advantage past a masked token without adding that token's TD error). `terminal_rewards`
moves each row's episode reward to its last action token, which is where the kit's trajectories have it.

Per-turn rewards (the kit's `reward_timing="turn"`, episodes rolled out with `verify_turns`) travel in the
episode's extra fields as `rsi_turn_rewards`: one verdict reward per action; each turn then gets its
potential-based delta on its last action token (`rsi_lite.rpr.targets.turn_reward_deltas`'s rule) instead of
the episode reward on the last one. A turn here is a run of mask-1 tokens, as in `rsi_lite.algos.advantages`.

Every episode ends with the verifier's verdict, so every row is terminal (`done`), as in `rpr.update`.
"""

from __future__ import annotations

import torch

from rsi_lite.algos.advantages import tb_gae, terminal_rewards, turn_index
from rsi_lite.algos.ppo import masked_whiten

TURN_REWARDS = "rsi_turn_rewards"
"""The extra field (`AgentLoopOutput.extra_fields`) holding an episode's per-action verdict rewards."""


def turn_token_rewards(turn_rewards: list[float], row_mask: torch.Tensor) -> torch.Tensor | None:
    """[R] token rewards with turn k's delta R_k - R_(k-1) on turn k's last action token, or None when the row
    has not one verdict per action (such an episode keeps its final reward, as in `rpr.targets.batch_tensors`)."""
    mask = row_mask.bool()
    turns = turn_index(row_mask.long().unsqueeze(0))[0]
    n = int(turns[mask].max()) if mask.any() else 0
    if not turn_rewards or len(turn_rewards) != n:
        return None
    out = torch.zeros(row_mask.shape, dtype=torch.float32)
    pos = torch.arange(row_mask.shape[0])
    prev = 0.0
    for k, r in enumerate(turn_rewards, start=1):
        last = int(pos[mask & (turns == k)].max())
        out[last] = float(r) - prev
        prev = float(r)
    return out


def tb_gae_advantages(token_level_rewards: torch.Tensor, values: torch.Tensor, response_mask: torch.Tensor, *,
                      gamma_turn: float, lam_turn: float, turn_rewards=None,
                      whiten: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, returns), both [B, R] and 0 off the mask, from verl's tensors (see the module docstring).

    `token_level_rewards` [B, R]: each row's episode reward is its sum (verl places the score on one token);
    `turn_rewards`: None, or per row None / a list of per-action verdict rewards. `whiten`: the advantages
    whitened over every action token of the batch (`rsi_lite.algos.ppo.masked_whiten`; verl computes advantages
    once over the whole batch on the driver, so this is the whole batch's whitening); the returns never are."""
    mask = response_mask.long()
    reward = token_level_rewards.float().sum(dim=1)
    rewards = terminal_rewards(reward, mask)
    if turn_rewards is not None:
        for i, tr in enumerate(turn_rewards):
            per_turn = turn_token_rewards(list(tr), mask[i]) if tr is not None else None
            if per_turn is not None:
                rewards[i] = per_turn
    done = torch.ones(mask.shape[0], dtype=torch.bool)
    adv, returns = tb_gae(rewards, values.float(), mask, done, gamma_turn, lam_turn)
    if whiten:
        adv = masked_whiten(adv, mask)
    return adv, returns


def compute_tb_gae_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, config=None,
                             values: torch.Tensor | None = None, turn_rewards=None, **_ignored):
    """The estimator as verl's registry holds it (`core_algos.register_adv_est("tb_gae")`, `register` below).

    verl's generic estimator call passes rewards, mask, config and group ids, never the critic's values
    (`verl/trainer/ppo/ray_trainer.py`, `compute_advantage`), so called that way this refuses; the trainer
    `scale_up.trainer.TBGAETrainer` calls it with the values and the per-turn rewards. `config`: verl's
    `algorithm` section; its `gamma` and `lam` are TB-GAE's per-turn discount and trace decay."""
    if values is None:
        raise ValueError("tb_gae needs the critic's values, which verl's generic estimator hook does not pass: "
                         "run it under trainer.v1.trainer_mode=rsi_tbgae (scale_up.trainer.TBGAETrainer)")
    gamma = float(config.get("gamma", 1.0)) if config is not None else 1.0
    lam = float(config.get("lam", 1.0)) if config is not None else 1.0
    return tb_gae_advantages(token_level_rewards, values, response_mask, gamma_turn=gamma, lam_turn=lam,
                             turn_rewards=turn_rewards)


def register() -> None:
    """Register `tb_gae` in verl's estimator registry (idempotent), so `algorithm.adv_estimator=tb_gae` is a name
    verl knows; verl's trainer still needs `critic.enable=True` for it (`verl/trainer/ppo/utils.py`, `need_critic`
    turns the critic off for any estimator other than GAE unless it is set)."""
    from verl.trainer.ppo import core_algos

    if core_algos.ADV_ESTIMATOR_REGISTRY.get("tb_gae") is not compute_tb_gae_advantage:
        core_algos.register_adv_est("tb_gae")(compute_tb_gae_advantage)
