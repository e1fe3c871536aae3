"""One PPO update assembled by hand, CleanRL-style, and checked line by line against the library's
(`rsi_lite.rpr.update.update`): notebook 05's centre.

`hand_update` is the whole update in the order a reader follows it (rewards -> values -> TB-GAE -> whitening ->
clipped loss -> value loss -> optimizer step), written with plain torch and a Python loop where a loop says more
than a vectorised line. `check_update` runs it on one copy of a policy and the library's `update` on another
(same weights, same batch, same settings) and compares every intermediate and the weights after the last step.

A check that passes on any code means nothing, so `check_update` also says whether the batch exercises what it
checks (`Check.meaningful`): successes and failures (else every advantage is the critic's error), at least two
minibatches (else batch-wide whitening equals per-minibatch whitening, and the second step never sees a moved
actor) and clipped tokens (else the clip range could be anything). tests/teach/test_ppo_by_hand.py breaks the hand
version on purpose (the advantage's sign, a symmetric clip, per-minibatch whitening) and asserts the check fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch

from ..policy.critic import ACTOR, CRITIC, actor_parameters, critic_parameters, set_trainable, using_adapter
from ..rollout.trajectory import Trajectory
from ..rpr.config import RPRConfig
from ..rpr.update import minibatch_order

# ---------------------------------------------------------------- a batch where the check means something

EPISODES = [
    # (first action, observation, second action, SPR reward): three successes, five failures of other lengths
    ("ls /app", "data.csv notes.txt", "wc -l < /app/data.csv > /app/count.txt", 1.0),
    ("cat /app/notes.txt", "copy the notes to /app/out/notes.txt", "mkdir -p /app/out && cp /app/notes.txt /app/out/", 1.0),
    ("head -n 2 /app/data.csv", "id,amount\n1,20", "awk -F, 'NR>1{s+=$2} END{print s}' /app/data.csv > /app/total.txt", 1.0),
    ("ls", "", "echo done", 0.0),
    ("cat /app/data.csv", "id,amount\n1,20\n2,5\n3,7", "wc -l /app/data.csv > /app/count.txt", 0.25),
    ("find /app -name '*.txt'", "/app/notes.txt", "cp /app/notes.txt /app/out/notes.txt", 0.125),
    ("pwd", "/", "rm -r /app", 0.0),
    ("grep -c , /app/data.csv", "4", "echo 4 > /app/count.txt", 0.4),
]
"""A hand-made batch: real shell commands, rewards set by hand (success 1.0, failures 0 to 0.4 as SPR would pay
partial progress); no sandbox and no verifier ran. Its purpose is arithmetic: the check compares two
implementations of one update, and needs successes, failures and several lengths, not a real task."""


def teaching_batch(policy, instruction: str = "Count the data rows of /app/data.csv.") -> list[Trajectory]:
    """`EPISODES` as the rollout records them: chat-formatted token ids, the action mask (1 on the model's own
    tokens: each command and its `<|im_end|>`), turn spans, and the rollout log-probabilities under the policy's
    actor as it is now (so the old pass agrees with the rollout)."""
    from ..policy.critic import token_logprobs

    tok = policy.tokenizer
    enc = lambda s: tok.encode(s, add_special_tokens=False)  # noqa: E731
    out = []
    for i, (act1, obs, act2, reward) in enumerate(EPISODES):
        ids, mask, spans = [], [], []
        for text, is_action in ((f"<|im_start|>user\n{instruction}<|im_end|>\n<|im_start|>assistant\n", False),
                                (f"{act1}<|im_end|>", True),
                                (f"\n<|im_start|>user\n{obs}<|im_end|>\n<|im_start|>assistant\n", False),
                                (f"{act2}<|im_end|>", True)):
            piece = enc(text)
            if is_action:
                spans.append([len(ids), len(ids) + len(piece)])
            ids += piece
            mask += [int(is_action)] * len(piece)
        t = torch.tensor([ids])
        with torch.no_grad():
            lps = token_logprobs(policy, t.to(policy.model.device), torch.ones_like(t).to(policy.model.device),
                                 only=torch.tensor([mask]).to(policy.model.device))[0].tolist()
        success = reward >= 1.0
        out.append(Trajectory(task=f"teach-{i}", task_path="", suite="teach", family="teach", difficulty="easy",
                              harness="plain", action_format="bash", policy="teach", seed=0, system="", messages=[],
                              token_ids=ids, action_mask=mask, logprobs=lps, turn_spans=spans,
                              finish_reason="complete", turns=2,
                              verifier={"strict": int(success), "passed": 0, "total": 0},
                              rewards={"s": float(success), "fdr": reward, "spr": reward},
                              tokens={"generated": sum(mask)}, timings={}))
    return out


def perturb_adapters(policy, std: float = 0.2, seed: int = 0) -> None:
    """Random LoRA B matrices (seeded by name): at initialisation (B = 0) actor and critic compute the same
    function as the base, which would hide a forward pass routed through the wrong adapter."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(policy.model.named_parameters()):
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * std)


# ---------------------------------------------------------------- the update, line by line

def pad(trajs: list[Trajectory], pad_id: int):
    """Right-padded [B, T] token ids, attention mask and action mask."""
    width = max(len(t.token_ids) for t in trajs)
    ids = torch.full((len(trajs), width), pad_id, dtype=torch.long)
    att = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for i, t in enumerate(trajs):
        n = len(t.token_ids)
        ids[i, :n], att[i, :n], mask[i, :n] = torch.tensor(t.token_ids), 1, torch.tensor(t.action_mask)
    return ids, att, mask


def token_rewards(trajs: list[Trajectory], mask, reward: str):
    """[B, T]: each episode's reward on its last action token, 0 elsewhere (the verdict comes after the last action)."""
    r = torch.zeros(mask.shape)
    for i, t in enumerate(trajs):
        last = int(mask[i].nonzero().max())
        r[i, last] = t.rewards[reward]
    return r


def length_groups(trajs: list[Trajectory], size: int) -> list[tuple[list[int], int]]:
    """Minibatches of `size` episodes, longest first, each with its own width (its longest episode)."""
    order = sorted(range(len(trajs)), key=lambda i: -len(trajs[i].token_ids))
    rows = [order[s:s + size] for s in range(0, len(order), size)]
    return [(g, max(len(trajs[i].token_ids) for i in g)) for g in rows]


def critic_values(policy, ids, att):
    """V(s_t) for every token: the critic adapter's last hidden state through the value head."""
    with using_adapter(policy.model, CRITIC):
        hidden = policy.model(input_ids=ids, attention_mask=att, output_hidden_states=True,
                              logits_to_keep=1).hidden_states[-1]
    return policy.value_head(hidden.float()).squeeze(-1)


def actor_logprobs(policy, ids, att, mask):
    """log pi(token_t | tokens before t) on action tokens, 0 elsewhere: position t is read from the logits at t - 1."""
    with using_adapter(policy.model, ACTOR):
        logits = policy.model(input_ids=ids, attention_mask=att).logits.float()
    lp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return torch.nn.functional.pad(lp, (1, 0)) * mask


def tb_gae_by_hand(rewards, values, mask, gamma_turn: float, lam_turn: float):
    """TB-GAE, one episode at a time, walking its action tokens backwards. Between two action tokens of one
    turn nothing decays; from one turn's last token to the next turn's first, gamma_turn and lam_turn apply once.
    Every episode ends with the verifier's verdict, so the value after the last action is 0. (Scalars are
    float32 tensors, as the library's are: Python floats are float64 and would differ in the 8th digit.)"""
    one, gamma, lam_ = (torch.tensor(x, dtype=torch.float32) for x in (1.0, gamma_turn, lam_turn))
    adv = torch.zeros(rewards.shape)
    for b in range(rewards.shape[0]):
        next_v, next_a, last = torch.tensor(0.0), torch.tensor(0.0), True
        for t in reversed(mask[b].nonzero().squeeze(-1).tolist()):
            crosses = last or mask[b, t + 1] == 0  # the next node is in the next turn (or past the end)
            g, lam = (gamma, lam_) if crosses else (one, one)
            delta = rewards[b, t] + g * next_v - values[b, t]
            next_a = delta + g * lam * next_a
            adv[b, t] = next_a
            next_v, last = values[b, t], False
    return adv, (adv + values) * mask


def masked_mean(x, mask):
    """The mean of x over the action tokens."""
    return (x * mask).sum() / mask.sum()


def whiten(adv, mask, eps: float = 1e-8):
    """(A - mean) / std over the whole batch's action tokens, once, before any minibatch. (Times 1 / sqrt, rsqrt,
    as the library does: a division by sqrt differs from it in the 7th digit, and Adam's first step, about lr times
    the gradient's sign, turns such a difference on a near-zero gradient into a whole step.)"""
    mean = masked_mean(adv, mask)
    var = masked_mean((adv - mean) ** 2, mask)
    return torch.where(mask.bool(), (adv - mean) * torch.rsqrt(var + eps), torch.zeros_like(adv))


def clipped_policy_loss(lp, old_lp, adv, mask, low: float, high: float):
    """-mean over action tokens of min(rho A, clip(rho, low, high) A), and the per-token pieces."""
    ratio = torch.exp((lp - old_lp) * mask)
    surr, clipped = ratio * adv, torch.clamp(ratio, low, high) * adv
    return -masked_mean(torch.minimum(surr, clipped), mask), ratio, surr, clipped


def value_mse(v, ret, mask):
    """0.5 * mean over action tokens of (V - R)^2."""
    return 0.5 * masked_mean((v - ret) ** 2, mask)


def explained(v, ret, mask) -> float:
    on = mask.bool()
    r, v = ret[on], v[on]
    return float(1 - (r - v).var(unbiased=False) / r.var(unbiased=False))


def hand_update(policy, trajs: list[Trajectory], cfg: RPRConfig, optims: dict, step: int = 0) -> dict:
    """One joint PPO update written out (rollout correction off, no KL, no entropy: the paper's settings).
    Returns every intermediate, each minibatch's statistics and the merged metrics (as `update` merges them)."""
    ids, att, mask = pad(trajs, policy.tokenizer.pad_token_id or 0)
    rewards = token_rewards(trajs, mask, cfg.reward)                      # 1. rewards on the last action token
    groups = length_groups(trajs, cfg.minibatch)
    old_v, old_lp = torch.zeros(mask.shape), torch.zeros(mask.shape)
    with torch.no_grad():                                                  # 2. values and old log-probs, before any step
        for rows, w in groups:
            old_v[rows, :w] = critic_values(policy, ids[rows, :w], att[rows, :w])
            old_lp[rows, :w] = actor_logprobs(policy, ids[rows, :w], att[rows, :w], mask[rows, :w])
    adv, ret = tb_gae_by_hand(rewards, old_v, mask, cfg.gamma_turn, cfg.lam_turn)  # 3. TB-GAE
    white = whiten(adv, mask)                                              # 4. whitened over the whole batch
    set_trainable(policy, actor=True, critic=True)
    policy.model.train()
    stats, clipped_tokens = [], {"A>0": 0, "A<0": 0}
    seen = old_v.clone()                                                   # the last epoch's values, row by row
    for epoch in range(cfg.ppo_epochs):
        for rows, w in minibatch_order(groups, cfg.seed, step, epoch):
            sl = (rows, slice(0, w))
            m = mask[sl]
            for o in optims.values():
                o.zero_grad(set_to_none=True)
            v = critic_values(policy, ids[sl], att[sl])
            if epoch == cfg.ppo_epochs - 1:
                seen[sl] = v.detach()
            lp = actor_logprobs(policy, ids[sl], att[sl], m)
            pg_loss, ratio, surr, clipped = clipped_policy_loss(lp, old_lp[sl], white[sl], m,  # 5. clipped loss
                                                                cfg.ppo.ratio_low, cfg.ppo.ratio_high)
            v_loss = value_mse(v, ret[sl], m)                              # 6. value loss
            (pg_loss + cfg.ppo.vf_coef * v_loss).backward()
            for o in optims.values():                                      # 7. clip gradients, step
                torch.nn.utils.clip_grad_norm_([p for g in o.param_groups for p in g["params"]], cfg.max_grad_norm)
                o.step()
            with torch.no_grad():
                on = m.bool()
                was_clipped = (clipped < surr) & on
                clipped_tokens["A>0"] += int((was_clipped & (white[sl] > 0)).sum())
                clipped_tokens["A<0"] += int((was_clipped & (white[sl] < 0)).sum())
                log_ratio = ((lp - old_lp[sl]) * m)[on]
                stats.append({"losses/policy": float(pg_loss), "losses/value": float(v_loss),
                              "losses/clipfrac": float(was_clipped[on].float().mean()),
                              "losses/approx_kl": float(((log_ratio.exp() - 1) - log_ratio).mean()),
                              "ratio/mean": float(ratio[on].mean()), "ratio/min": float(ratio[on].min()),
                              "ratio/max": float(ratio[on].max())})
    policy.model.eval()
    set_trainable(policy, actor=False, critic=False)
    merged = {k: (min if k == "ratio/min" else max if k == "ratio/max" else lambda x: sum(x) / len(x))(
        [s[k] for s in stats]) for k in stats[0]}
    merged["losses/explained_variance_before"] = explained(old_v, ret, mask)
    merged["losses/explained_variance"] = explained(seen, ret, mask)       # over the whole batch, never per minibatch
    return {"rewards": rewards, "old_v": old_v, "old_lp": old_lp, "adv": adv, "ret": ret, "white": white,
            "groups": groups, "stats": stats, "metrics": merged, "clipped_tokens": clipped_tokens}


# ---------------------------------------------------------------- the check

@dataclass
class Line:
    """One line of the update: the largest difference between the hand version and the library's."""

    name: str
    library: str
    diff: float
    tol: float

    @property
    def ok(self) -> bool:
        return self.diff <= self.tol


@dataclass
class Check:
    lines: list[Line]
    facts: dict = field(default_factory=dict)
    hand: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(line.ok for line in self.lines)

    @property
    def meaningful(self) -> bool:
        f = self.facts
        return (f["successes"] > 0 and f["failures"] > 0 and f["minibatches"] >= 2 and f["clipped tokens"] > 0
                and f["weights moved"] > 100 * TOL)

    def table(self) -> str:
        """A markdown table of the lines and the facts that make them mean something."""
        rows = ["| line | compared with | max abs difference | within 1e-6 |", "|---|---|---:|:---:|"]
        rows += [f"| {x.name} | `{x.library}` | {x.diff:.1e} | {'yes' if x.ok else '**no**'} |" for x in self.lines]
        facts = ", ".join(f"{k}: {v:.3g}" if isinstance(v, float) else f"{k}: {v}" for k, v in self.facts.items())
        return "\n".join(rows) + f"\n\nThe batch: {facts}."


TOL = 1e-6


def _diff(a, b) -> float:
    if isinstance(a, torch.Tensor):
        return float((a.float() - b.float()).abs().max()) if a.numel() else 0.0
    if math.isnan(a) and math.isnan(b):
        return 0.0
    return abs(float(a) - float(b))


def trainable(policy) -> list:
    return [p.detach().clone() for p in actor_parameters(policy) + critic_parameters(policy)]


def check_update(make_policy, cfg: RPRConfig, batch=teaching_batch, tol: float = TOL) -> Check:
    """Run `hand_update` on one policy from `make_policy()` and the library's `update` on another (identical,
    with the same batch and settings) and compare each line. `cfg` should have `rollout_correction='off'` (the
    hand version has none) and `accumulate=1` (a step per minibatch, as the hand version takes)."""
    from ..algos.ppo import masked_whiten
    from ..rpr.stage import make_optimizers
    from ..rpr.targets import advantages_for, batch_tensors, device_batch, old_pass
    from ..rpr.update import update

    if cfg.rollout_correction == "on" or cfg.accumulate != 1 or cfg.reward_timing != "final":
        raise ValueError("check_update: the hand update has no rollout correction, a step per minibatch "
                         "(accumulate=1) and the final reward timing")
    cfg = replace(cfg, rollout_correction="off")
    hand_pol, lib_pol = make_policy(), make_policy()
    trajs = batch(hand_pol)
    before = trainable(hand_pol)
    if any(_diff(a, b) for a, b in zip(before, trainable(lib_pol))):
        raise ValueError("check_update: make_policy() must return identical policies")

    hand = hand_update(hand_pol, trajs, cfg, make_optimizers(hand_pol, cfg))

    lb = device_batch(lib_pol, trajs, cfg)
    old_v, old_lp = old_pass(lib_pol, lb, True)
    adv, ret = advantages_for(cfg, lb.rewards, old_v, lb.mask)
    white = masked_whiten(adv, lb.mask)
    row = update(lib_pol, trajs, cfg, make_optimizers(lib_pol, cfg), train_actor=True)
    _, _, _, _, rewards = batch_tensors(trajs, cfg.reward, lib_pol.tokenizer.pad_token_id or 0)
    lib_groups = [(sorted(g.tolist()), w) for g, w in lb.groups]

    after_hand, after_lib = trainable(hand_pol), trainable(lib_pol)
    m = hand["metrics"]
    lines = [
        Line("1. rewards on the last action token", "rpr.targets.batch_tensors", _diff(hand["rewards"], rewards), tol),
        Line("   minibatches by length", "rpr.targets.minibatches",
             0.0 if [(sorted(g), w) for g, w in hand["groups"]] == lib_groups else math.inf, tol),
        Line("2. critic values before the update", "rpr.targets.old_pass", _diff(hand["old_v"], old_v), tol),
        Line("   actor log-probs before the update", "rpr.targets.old_pass", _diff(hand["old_lp"], old_lp), tol),
        Line("3. TB-GAE advantages", "rpr.targets.advantages_for", _diff(hand["adv"], adv), tol),
        Line("   returns (A + V)", "rpr.targets.advantages_for", _diff(hand["ret"], ret), tol),
        Line("4. whitened advantages", "algos.ppo.masked_whiten", _diff(hand["white"], white), tol),
        Line("   explained variance before", "update(...)['losses/explained_variance_before']",
             _diff(m["losses/explained_variance_before"], row["losses/explained_variance_before"]), tol),
    ]
    for k, n in (("losses/policy", "5. clipped policy loss (mean over minibatches)"),
                 ("ratio/min", "   ratio, smallest"), ("ratio/max", "   ratio, largest"),
                 ("losses/clipfrac", "   clip fraction"), ("losses/approx_kl", "   approx KL"),
                 ("losses/value", "6. value loss (mean over minibatches)"),
                 ("losses/explained_variance", "   explained variance, last epoch, whole batch")):
        lines.append(Line(n, f"update(...)['{k}']", _diff(m[k], row[k]), tol))
    lines.append(Line("7. weights after the optimizer steps", "update(...) on an identical policy",
                      max(_diff(a, b) for a, b in zip(after_hand, after_lib)), tol))
    successes = sum(t.verifier["strict"] for t in trajs)
    facts = {"episodes": len(trajs), "successes": successes, "failures": len(trajs) - successes,
             "minibatches": len(hand["groups"]) * cfg.ppo_epochs,
             "clipped tokens": sum(hand["clipped_tokens"].values()),
             "clipped with A>0": hand["clipped_tokens"]["A>0"], "clipped with A<0": hand["clipped_tokens"]["A<0"],
             "clip fraction": m["losses/clipfrac"], "ratio range": f"[{m['ratio/min']:.3f}, {m['ratio/max']:.3f}]",
             "weights moved": max(_diff(a, b) for a, b in zip(before, after_lib))}
    return Check(lines, facts, hand)


def tiny_policy_factory(model_dir, lora_std: float = 0.2, seed: int = 0):
    """`make_policy` for `check_update`: a fresh actor and critic on the local model directory `model_dir` (the
    stage's own loader), LoRA B matrices perturbed (`perturb_adapters`) so that actor and critic differ."""
    from ..rpr.stage import load_actor_critic

    def make():
        policy = load_actor_critic("base", None, model=str(model_dir))
        if lora_std:
            perturb_adapters(policy, lora_std, seed)
        return policy

    return make


def check_config(**overrides) -> RPRConfig:
    """The settings notebook 05 checks with: the stage's update (TB-GAE, gamma_turn 1, lam_turn 0.95, the 0.7 / 6.0
    clip, SPR, a step per minibatch) with two PPO epochs over minibatches of 4 and learning rates raised so that
    the later minibatches see a moved actor and some tokens clip (at the stage's rates, on this batch, none do:
    the check would then pass with any clip range)."""
    base = dict(minibatch=4, ppo_epochs=2, actor_lr=1e-2, critic_lr=1e-2, gradient_checkpointing=False,
                rollout_correction="off")
    return RPRConfig(**{**base, **overrides})


# ---------------------------------------------------------------- the clipped objective, drawn

def clip_objective(ratios: list[float], advantage: float, low: float, high: float) -> list[float]:
    """min(rho A, clip(rho, low, high) A) for each ratio rho: what one token contributes to the objective PPO
    maximises. Flat where the gradient stops.

    >>> clip_objective([0.5, 1.0, 7.0], 1.0, 0.7, 6.0)
    [0.5, 1.0, 6.0]
    >>> clip_objective([0.5, 1.0, 7.0], -1.0, 0.7, 6.0)
    [-0.7, -1.0, -7.0]
    """
    return [min(r * advantage, min(max(r, low), high) * advantage) for r in ratios]


def clip_objective_figure(ranges=((0.8, 1.2), (0.7, 6.0)), rho_max: float = 7.0):
    """Two panels, A = +1 and A = -1: the clipped objective against the ratio for each clip range."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rhos = [i / 100 for i in range(1, int(rho_max * 100) + 1)]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("A > 0 (a better-than-expected token)",
                                                        "A < 0 (a worse-than-expected token)"))
    for col, a in ((1, 1.0), (2, -1.0)):
        for (low, high), dash in zip(ranges, ("dot", "solid")):
            fig.add_trace(go.Scatter(x=rhos, y=clip_objective(rhos, a, low, high), mode="lines",
                                     line_dash=dash, name=f"clip [{low}, {high}]", showlegend=col == 1), 1, col)
        fig.add_trace(go.Scatter(x=rhos, y=[r * a for r in rhos], mode="lines", line=dict(color="#bbb", width=1),
                                 name="unclipped rho A", showlegend=col == 1), 1, col)
    fig.update_xaxes(title_text="ratio rho = pi_new / pi_old")
    fig.update_yaxes(title_text="min(rho A, clip(rho) A)", col=1)
    fig.update_layout(height=340, margin=dict(t=40))
    return fig
