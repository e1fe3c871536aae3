"""PPO losses on action tokens: a clipped surrogate with an asymmetric ratio clip, and the value loss.

Background. For each action token t with advantage A_t and the probability ratio
rho_t = pi_new(a_t | s_t) / pi_old(a_t | s_t) of the sampled token,

    L_policy = - mean_t  min( rho_t * A_t,  clip(rho_t, r_low, r_high) * A_t )
    L_value  =   mean_t  0.5 * (V_t - R_t)^2
    L        =   L_policy + vf_coef * L_value + kl_coef * KL + ent_coef * (-H)

with the mean over action tokens of the batch (masked tokens never count). The paper clips
the ratio to [0.70, 6.00] (epsilon 0.30 below, 5.00 above): a token the policy has come to
like may be pushed up to six-fold before the gradient stops, one it dislikes only down to
0.7; KL and entropy coefficients are 0 (present, so a learner can turn them on).

Worked example. A = [+1, -1], ratios [7.0, 0.5], clip [0.7, 6.0]:
    token 1: min(7*1, 6*1) = 6     (clipped: no gradient past 6x)
    token 2: min(0.5*-1, 0.7*-1) = -0.7   (clipped)
    L_policy = -(6 - 0.7) / 2 = -2.65, clipfrac = 1.0

Rollout correction (truncated importance sampling, TIS). The tokens were drawn by the rollout
engine from its own distribution pi_rollout (its log-probabilities are recorded with them), which
need not be pi_old, the training forward's distribution the surrogate is defined on: another engine
or precision computes other numbers, and a sampling temperature or top-p changes the distribution
itself. Each token's policy term is weighted by the truncated importance weight

    w_t = min( pi_old(a_t | s_t) / pi_rollout(a_t | s_t),  C )      (detached; 0 off the mask)
    L_policy = - mean_t  w_t * min( rho_t * A_t,  clip(rho_t, r_low, r_high) * A_t )

so the estimate is again one under pi_old, up to the bias the truncation trades for a variance bounded by C
(`truncated_is_weights`;
verl's rollout correction, TRL's vLLM importance-sampling correction). The value loss is not weighted.

Metric names are fixed (TRL-style): losses/policy, losses/value, losses/clipfrac,
losses/approx_kl, losses/explained_variance, ratio/mean, ratio/min, ratio/max; the rollout
correction's tis/weight_mean (mean of w_t over action tokens) and tis/truncated_frac (share of
action tokens whose ratio pi_old / pi_rollout exceeded C).
Pure tensor functions: no model, no file.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch


@dataclass
class PPOConfig:
    """The PPO update."""

    ratio_low: float = 0.7
    """Lower ratio bound (1 - epsilon_low; the paper's 0.70)."""
    ratio_high: float = 6.0
    """Upper ratio bound (1 + epsilon_high; the paper's 6.00)."""
    vf_coef: float = 1.0
    """Weight of the value loss (it reaches only the critic's weights; actor and critic share none)."""
    kl_coef: float = 0.0
    """Weight of the k3 KL estimate to the rollout policy (0, as in the paper)."""
    ent_coef: float = 0.0
    """Weight of the entropy bonus (0, as in the paper)."""
    whiten_advantages: bool = True
    """Normalise advantages over the batch's action tokens."""
    tis_cap: float = 2.0
    """C, the truncation of the rollout-correction weight min(pi_old / pi_rollout, C) (`truncated_is_weights`),
    where the correction is on (`RPRConfig.rollout_correction`). 2.0 is the threshold verl's rollout correction
    ships with: a token the rollout engine under-sampled counts at most twice, so a few rare tokens cannot carry
    the batch's gradient, while weights below 1 (tokens the engine over-sampled) are never cut."""

    def to_dict(self) -> dict:
        return asdict(self)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.float()
    return (x * m).sum() / m.sum().clamp(min=1.0)


def masked_whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """(x - mean) / std over the masked entries; masked-out entries become 0."""
    m = mask.float()
    n = m.sum().clamp(min=1.0)
    mean = (x * m).sum() / n
    var = ((x - mean) ** 2 * m).sum() / n
    return torch.where(mask.bool(), (x - mean) * torch.rsqrt(var + eps), torch.zeros_like(x))


def explained_variance(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor) -> float:
    """1 - Var(R - V) / Var(R) over masked entries: 1 is perfect, 0 no better than a constant, < 0 worse."""
    r = returns[mask.bool()].float()
    v = values[mask.bool()].float()
    var_r = r.var(unbiased=False)
    if r.numel() < 2 or var_r.item() == 0:
        return float("nan")
    return float(1 - (r - v).var(unbiased=False) / var_r)


def truncated_is_weights(old_logprobs: torch.Tensor, rollout_logprobs: torch.Tensor, mask: torch.Tensor,
                         cap: float = 2.0) -> tuple[torch.Tensor, dict]:
    """The rollout correction's per-token weights: w_t = min(exp(old_lp_t - rollout_lp_t), C) on action tokens,
    0 elsewhere, detached (a fixed weight, like the advantages: no gradient flows through it).

    All inputs [B, T] (log-probabilities of the sampled tokens under the training forward, `old_logprobs`, and
    as the rollout engine recorded them, `rollout_logprobs`); returns (w [B, T], stats) with
    tis/weight_mean (mean of w over the mask) and tis/truncated_frac (share of masked tokens with ratio > C).

    Worked example. old_lp - rollout_lp = [log 0.8, log 3, log 5], mask [1, 1, 0], C = 2:
        ratios  [0.8, 3.0, 5.0]
        w       [0.8, 2.0, 0.0]    (the second truncated at C, the third masked)
        tis/weight_mean = (0.8 + 2.0) / 2 = 1.4,  tis/truncated_frac = 1 / 2 = 0.5
    """
    with torch.no_grad():
        m = mask.bool()
        ratio = torch.exp(torch.where(m, old_logprobs - rollout_logprobs, torch.zeros_like(old_logprobs)))
        w = torch.where(m, torch.clamp(ratio, max=cap), torch.zeros_like(ratio))
        stats = {"tis/weight_mean": float(masked_mean(w, mask)),
                 "tis/truncated_frac": float(masked_mean((ratio > cap).float(), mask))}
    return w.detach(), stats


def policy_loss(logprobs: torch.Tensor, old_logprobs: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
                ratio_low: float = 0.7, ratio_high: float = 6.0,
                is_weights: torch.Tensor | None = None) -> tuple[torch.Tensor, dict]:
    """Clipped surrogate over action tokens. All inputs [B, T]; returns (loss, stats). `is_weights` [B, T]
    (`truncated_is_weights`): each token's term multiplied by its weight; None: unweighted."""
    log_ratio = (logprobs - old_logprobs) * mask
    ratio = torch.exp(log_ratio)
    surr = ratio * advantages
    clipped = torch.clamp(ratio, ratio_low, ratio_high) * advantages
    objective = torch.minimum(surr, clipped)
    if is_weights is not None:
        objective = is_weights.detach() * objective
    loss = -masked_mean(objective, mask)
    with torch.no_grad():
        m = mask.bool()
        stats = {"losses/clipfrac": float(masked_mean((clipped < surr).float(), mask)),
                 "losses/approx_kl": float(masked_mean((ratio - 1) - log_ratio, mask)),
                 "ratio/mean": float(masked_mean(ratio, mask)),
                 "ratio/min": float(ratio[m].min()) if m.any() else float("nan"),
                 "ratio/max": float(ratio[m].max()) if m.any() else float("nan")}
    return loss, stats


def value_loss(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """0.5 * mean squared error to the returns over action tokens."""
    return 0.5 * masked_mean((values - returns) ** 2, mask)


def ppo_loss(logprobs, old_logprobs, advantages, values, returns, mask, cfg: PPOConfig | None = None,
             entropy: torch.Tensor | None = None, is_weights: torch.Tensor | None = None) -> tuple[torch.Tensor, dict]:
    """The whole objective and its metrics (names fixed, see the module docstring). `is_weights`: the rollout
    correction's token weights (`truncated_is_weights`), on the policy term only; None: none."""
    cfg = cfg or PPOConfig()
    adv = masked_whiten(advantages, mask) if cfg.whiten_advantages else advantages
    pl, stats = policy_loss(logprobs, old_logprobs, adv, mask, cfg.ratio_low, cfg.ratio_high, is_weights)
    vl = value_loss(values, returns, mask)
    loss = pl + cfg.vf_coef * vl
    if cfg.kl_coef:
        log_ratio = (logprobs - old_logprobs) * mask
        loss = loss + cfg.kl_coef * masked_mean(torch.exp(log_ratio) - 1 - log_ratio, mask)
    if cfg.ent_coef and entropy is not None:
        loss = loss - cfg.ent_coef * masked_mean(entropy, mask)
    stats.update({"losses/policy": float(pl.detach()), "losses/value": float(vl.detach()),
                  "losses/explained_variance": explained_variance(values.detach(), returns, mask)})
    return loss, stats
