"""Advantage estimators over multi-turn token sequences: token-level GAE and Turn-Boundary GAE.

Background. A trajectory is one token sequence: the model's own action tokens (mask 1)
interleaved with prompt, observation and harness tokens (mask 0). Only action tokens are
decisions, so only they are recursion nodes: masked tokens are skipped, never discounted
through, and get advantage 0. The episode's reward sits on its last action token.

Key equations. Number the action tokens 1..N in order, with values V_i and rewards r_i
(r_N = episode reward, the rest 0). Between node i and node i+1 the estimator applies a
discount g_i and a trace decay l_i:

    delta_i = r_i + g_i * V_{i+1} - V_i
    A_i     = delta_i + g_i * l_i * A_{i+1},        returns R_i = A_i + V_i

    token-level GAE :  g_i = gamma,                    l_i = lam                 (every token)
    TB-GAE          :  g_i = gamma_turn ** B_i,        l_i = lam_turn ** B_i     (B_i = turn boundaries
                                                                                  between i and i+1)

Inside one action B_i = 0: no decay at all, so a 60-token command is not discounted 60
times; from the last token of one turn to the first of the next B_i = 1. With
gamma = lam = 1 both estimators are the same (and equal to reward-to-go minus V).

After node N: V_{N+1} = 0 if the episode ended (terminal), else the episode was cut
(turn or context limit) and we bootstrap from the last value, V_{N+1} = V_N, discounted as
one more boundary (TB-GAE) or token (GAE).

Worked example (one sequence, mask [0,1,1,0,1], values [., .5, .6, ., .8], reward 1 on
the last action token, terminal). TB-GAE with gamma_turn=0.9, lam_turn=0.5:
    node 3 (t=4): delta = 1 - .8 = .2,                 A = .2
    node 2 (t=2): crosses 1 boundary, g = .9, l = .5:   delta = .9*.8 - .6 = .12,  A = .12 + .45*.2 = .21
    node 1 (t=1): same turn, g = l = 1:                 delta = .6 - .5 = .1,      A = .1 + .21 = .31
    -> advantages [0, .31, .21, 0, .2]

Pitfalls: a terminal reward on a masked token (e.g. the chat template's closing token)
would be skipped; `terminal_rewards` always places it on the last action token. Padding
is just more masked tokens, so it changes nothing.
"""

from __future__ import annotations

import torch


def turn_index(action_mask: torch.Tensor) -> torch.Tensor:
    """[B, T] 0/1 -> [B, T] long: the number of action turns started up to each token (a turn starts where the
    mask goes from 0 to 1)."""
    m = action_mask.long()
    prev = torch.nn.functional.pad(m[:, :-1], (1, 0))
    return torch.cumsum((m == 1) & (prev == 0), dim=1)


def turn_start_values(values: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """[B, T] values -> [B, T]: each action token's value replaced by its turn's first action token's (the state the
    turn's reply was written from), other tokens' left as they are. With these, TB-GAE gives every token of a turn
    one advantage (inside a turn, gamma and lambda are 1, so the values in between cancel): the turn, not the token,
    is the action, as an utterance-level critic has it (ArCHer, Zhou et al. 2024). `RPRConfig.value_at` 'turn'."""
    m = action_mask.bool()
    prev = torch.nn.functional.pad(m[:, :-1], (1, 0))
    pos = torch.arange(values.shape[1], device=values.device).expand_as(values)
    start = torch.where(m & ~prev, pos, torch.zeros_like(pos)).cummax(dim=1).values
    return torch.where(m, values.gather(1, start), values)


def terminal_rewards(reward: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """[B] episode rewards -> [B, T] token rewards: each on its row's last action token (rows without one get none)."""
    T = action_mask.shape[1]
    pos = torch.arange(T, device=action_mask.device).expand_as(action_mask)
    last = torch.where(action_mask.bool(), pos, torch.full_like(pos, -1)).max(dim=1).values
    out = torch.zeros(action_mask.shape, dtype=torch.float32, device=action_mask.device)
    rows = torch.nonzero(last >= 0).squeeze(1)
    out[rows, last[rows]] = reward.float()[rows]
    return out


def _scan(rewards, values, action_mask, done, step_discount):
    """The shared reverse recursion; `step_discount(boundaries)` -> (g, l) tensors for the crossing."""
    B, T = values.shape
    mask = action_mask.bool()
    turns = turn_index(action_mask)
    adv = torch.zeros(B, T, dtype=torch.float32, device=values.device)
    values = values.float()
    # state carried backwards: the next node's value, advantage and turn; before the last node, the bootstrap
    last_v = torch.zeros(B, device=values.device)
    has_last = torch.zeros(B, dtype=torch.bool, device=values.device)
    for t in range(T - 1, -1, -1):  # find each row's last action value for bootstrapping
        new = mask[:, t] & ~has_last
        last_v = torch.where(new, values[:, t], last_v)
        has_last |= mask[:, t]
    next_v = torch.where(done.bool(), torch.zeros_like(last_v), last_v)
    next_a = torch.zeros(B, device=values.device)
    next_turn = turns[:, -1] + 1  # one boundary past the end, for the bootstrap
    for t in range(T - 1, -1, -1):
        m = mask[:, t]
        g, lam = step_discount(next_turn - turns[:, t])
        delta = rewards[:, t] + g * next_v - values[:, t]
        a = delta + g * lam * next_a
        adv[:, t] = torch.where(m, a, torch.zeros_like(a))
        next_v = torch.where(m, values[:, t], next_v)
        next_a = torch.where(m, a, next_a)
        next_turn = torch.where(m, turns[:, t], next_turn)
    returns = torch.where(mask, adv + values, torch.zeros_like(adv))
    return adv, returns


def token_gae(rewards: torch.Tensor, values: torch.Tensor, action_mask: torch.Tensor, done: torch.Tensor,
              gamma: float = 1.0, lam: float = 0.95) -> tuple[torch.Tensor, torch.Tensor]:
    """Token-level GAE over action tokens. rewards, values, action_mask [B, T]; done [B] -> (advantages, returns),
    both [B, T] and 0 on masked tokens."""
    return _scan(rewards, values, action_mask, done,
                 lambda b: (torch.full(b.shape, gamma, dtype=torch.float32, device=b.device),
                            torch.full(b.shape, lam, dtype=torch.float32, device=b.device)))


def tb_gae(rewards: torch.Tensor, values: torch.Tensor, action_mask: torch.Tensor, done: torch.Tensor,
           gamma_turn: float = 1.0, lam_turn: float = 0.95) -> tuple[torch.Tensor, torch.Tensor]:
    """Turn-Boundary GAE: discount and trace decay only when crossing turn boundaries. Shapes as `token_gae`."""
    return _scan(rewards, values, action_mask, done,
                 lambda b: (torch.pow(torch.tensor(gamma_turn, device=b.device), b.float()),
                            torch.pow(torch.tensor(lam_turn, device=b.device), b.float())))


ESTIMATORS = {"tb_gae": tb_gae, "gae": token_gae}
"""Every critic-based advantage estimator by the name `RPRConfig.estimator` knows it by. Each is called as
`f(rewards, values, action_mask, done, discount, trace_decay)` (at a turn boundary for TB-GAE, per action token
for GAE) and returns (advantages, returns). The critic-free ones are `GROUP_ESTIMATORS`."""


# ---------------------------------------------------------------- critic-free: group-relative advantages
#
# The field's common alternative to a learned critic (verl's `grpo` and `rloo` estimators, TRL's GRPOTrainer and
# RLOOTrainer): roll each task out k times with the same policy, and judge each episode against the others of
# its group. The group's mean reward is the baseline the critic would otherwise learn, measured instead of
# predicted; every action token of an episode gets the episode's one advantage (no credit assignment inside it).
#
#     rloo   A_i = r_i - mean_{j != i} r_j  =  k / (k - 1) * (r_i - mean_j r_j)   (leave-one-out: unbiased)
#     grpo   A_i = (r_i - mean_j r_j) / (std_j r_j + eps)                         (population std, as verl)
#
# A group whose k rewards are equal (all solved, all failed) gives every episode 0: nothing to learn, and no
# critic error to learn from either. A group of one gives 0 too.

def rloo(rewards: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    """Leave-one-out advantages: each episode's reward minus the mean of the other episodes of its group.
    rewards [B] float, group [B] long (episodes of one task share a group id) -> [B].

    >>> rloo(torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0]), torch.tensor([0, 0, 0, 1, 1])).tolist()
    [1.0, -0.5, -0.5, 0.0, 0.0]
    """
    total, count = _group_sums(rewards, group)
    n = count[group]
    others = torch.where(n > 1, (total[group] - rewards) / (n - 1).clamp(min=1), rewards)
    return rewards - others


def grpo(rewards: torch.Tensor, group: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Group-normalised advantages: (reward - group mean) / (group std + eps), the population std.
    Shapes as `rloo`.

    >>> [round(x, 3) for x in grpo(torch.tensor([1.0, 0.0, 0.0, 1.0]), torch.tensor([0, 0, 0, 0])).tolist()]
    [1.0, -1.0, -1.0, 1.0]
    """
    total, count = _group_sums(rewards, group)
    mean = total / count.clamp(min=1)
    sq = torch.zeros_like(total).index_add_(0, group, (rewards - mean[group]) ** 2)
    std = torch.sqrt(sq / count.clamp(min=1))
    return (rewards - mean[group]) / (std[group] + eps)


def _group_sums(rewards: torch.Tensor, group: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    r = rewards.float()
    n = int(group.max()) + 1 if group.numel() else 0
    total = torch.zeros(n, dtype=r.dtype).index_add_(0, group, r)
    count = torch.zeros(n, dtype=r.dtype).index_add_(0, group, torch.ones_like(r))
    return total, count


GROUP_ESTIMATORS = {"rloo": rloo, "grpo": grpo}
"""The critic-free estimators by name (`RPRConfig.estimator`): `f(rewards [B], group [B])` -> each episode's
advantage [B], spread over its action tokens by `episode_advantages`."""


def group_ids(keys: list) -> torch.Tensor:
    """[B] long: one id per distinct key (a task's name), in order of first appearance.

    >>> group_ids(["b", "a", "b"]).tolist()
    [0, 1, 0]
    """
    ids: dict = {}
    return torch.tensor([ids.setdefault(k, len(ids)) for k in keys], dtype=torch.long)


def episode_advantages(advantages: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """[B] advantages -> [B, T]: each row's on all its action tokens, 0 on the rest."""
    return torch.where(action_mask.bool(), advantages.float()[:, None], torch.zeros(action_mask.shape))


def reference_tb_gae(rewards: list[float], values: list[float], mask: list[int], done: bool,
                     gamma_turn: float, lam_turn: float, per_token: bool = False) -> list[float]:
    """One sequence, plain Python, straight from the equations (the tests' reference).
    per_token=True gives token-level GAE with gamma=gamma_turn, lam=lam_turn."""
    nodes, turn, prev = [], 0, 0
    for t, m in enumerate(mask):
        if m and not prev:
            turn += 1
        if m:
            nodes.append((t, turn))
        prev = m
    adv = [0.0] * len(mask)
    if not nodes:
        return adv
    next_v = 0.0 if done else values[nodes[-1][0]]
    next_a, next_turn = 0.0, nodes[-1][1] + 1
    for t, k in reversed(nodes):
        crossings = 1 if per_token else next_turn - k
        g, lam = gamma_turn ** crossings, lam_turn ** crossings
        delta = rewards[t] + g * next_v - values[t]
        next_a = delta + g * lam * next_a
        adv[t] = next_a
        next_v, next_turn = values[t], k
    return adv
