"""The RPR stage: PPO with a learned critic that can be inherited from the previous cycle.

One loop that reads top to bottom (CleanRL's order):

    warm-up       one pass over the warm-up tasks, actor frozen: the critic learns values
    calibration   `calibration_steps` critic-only steps on training batches
    joint         `steps` PPO updates of actor and critic together
    each step:    B tasks, one rollout each (plain harness) -> reward (S | FDR | SPR)
                  -> values (critic) -> TB-GAE or GAE advantages -> minibatches
                  -> ppo_loss -> actor and critic optimizers -> metrics.jsonl

Every episode ends with the verifier's verdict, so every episode is terminal for the
estimator (no bootstrap; `advantages` documents the bootstrap for cut sequences).
"Old" log-probabilities are recomputed with the actor before the update, in the same
forward as training, so the first ratio is exactly 1; the gap to the rollout's own
log-probabilities (sampled at `rollout.temperature`) is logged as `logprobs/rollout_gap`.

Files in `DIR/rpr-N/`: config.json; step-KKK/ per finished step (metrics.json,
trajectories.jsonl, and for the newest step actor/, critic/, optim.pt; DONE last), so a
killed run resumes at the first unfinished step; at the end metrics.jsonl, actor/,
critic/, summary.json and DONE. Learning rates are scaled for LoRA on a 135M model:
the paper's 5e-7 (actor) and 1.5e-5 (critic) are for full weights of a 27B model; LoRA
needs larger steps, so the defaults keep the paper's ordering (critic faster than actor)
at 2e-5 and 2e-4.
"""

from __future__ import annotations

import json
import random
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .advantages import tb_gae, terminal_rewards, token_gae
from .ppo import PPOConfig, explained_variance, masked_whiten, ppo_loss, value_loss
from .rollout import RolloutConfig, run_episodes
from .trajectory import Trajectory


@dataclass
class RPRConfig:
    """One refinement stage."""

    init: str = "base"
    """The actor to start from: 'base' or an adapter directory (RSR's checkpoint; `--from base` is the control)."""
    model: str = "smollm2-135m"
    """The base model: the bundled alias or a local Hugging Face directory."""
    critic_from: str = ""
    """A saved critic to inherit (the previous RPR stage's `critic/`); empty: a fresh critic."""
    pool: str = ""
    """Training tasks; empty: the run's generated pool (DIR/pool, shared with RSR)."""
    pool_size: int = 360
    """Tasks of the generated pool."""
    warmup_tasks: int = 16
    """Tasks of the critic warm-up (from the pool: the kit's swr suite is an evaluation suite, never trained on)."""
    warmup_epochs: int = 2
    """Critic passes over the warm-up rollouts."""
    calibration_steps: int = 4
    """Critic-only steps on fresh training batches before joint updates."""
    steps: int = 8
    """Joint actor-critic PPO steps."""
    batch_tasks: int = 8
    """B: tasks per step, one rollout each."""
    minibatch: int = 4
    """Trajectories per gradient step."""
    ppo_epochs: int = 1
    """Passes over each batch."""
    reward: str = "spr"
    """s | fdr | spr."""
    estimator: str = "tb_gae"
    """tb_gae | gae."""
    gamma_turn: float = 1.0
    """Discount at a turn boundary (per token for 'gae')."""
    lam_turn: float = 0.95
    """Trace decay at a turn boundary (per token for 'gae')."""
    actor_lr: float = 2e-5
    """Actor LoRA learning rate."""
    critic_lr: float = 2e-4
    """Critic LoRA + value head learning rate."""
    max_grad_norm: float = 1.0
    """Global gradient-norm clip, per optimizer."""
    seed: int = 0
    """Task order and sampling seed."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """Loss settings (clip 0.7 / 6.0, no KL, no entropy)."""
    rollout: RolloutConfig = field(default_factory=lambda: RolloutConfig(harness="plain", temperature=1.0,
                                                                         max_turns=3, max_new_tokens=64))
    """Training rollouts: the plain harness at temperature 1 (the training forward's distribution)."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RPRConfig":
        d = dict(d)
        d["ppo"] = PPOConfig(**d.get("ppo", {}))
        d["rollout"] = RolloutConfig(**d.get("rollout", {}))
        return cls(**d)


# ---------------------------------------------------------------- tensors from trajectories

def batch_tensors(trajs: list[Trajectory], reward: str, pad_id: int):
    """Right-padded ids, attention, action mask, rollout log-probs and token rewards [B, T]."""
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
    return ids, att, mask, lps, rewards


def advantages_for(cfg: RPRConfig, rewards, values, mask):
    import torch

    done = torch.ones(values.shape[0], dtype=torch.bool)  # every episode ends with the verifier's verdict
    if cfg.estimator == "tb_gae":
        return tb_gae(rewards, values, mask, done, gamma_turn=cfg.gamma_turn, lam_turn=cfg.lam_turn)
    if cfg.estimator == "gae":
        return token_gae(rewards, values, mask, done, gamma=cfg.gamma_turn, lam=cfg.lam_turn)
    raise ValueError(f"RPRConfig.estimator: {cfg.estimator!r} is neither 'tb_gae' nor 'gae'")


def minibatches(trajs: list[Trajectory], size: int) -> list[list[int]]:
    """Row indices in groups of `size`, episodes of similar length together (longest first).

    Each group is cut to its own widest episode, so a short episode never pays for the
    padding of a long one: on a real step (8 episodes of 165 to 820 tokens) grouping by length
    halves the tokens a forward pass runs over. The groups stay the same across PPO epochs
    (only their order is shuffled), so the "old" pass and the training pass see identical shapes."""
    order = sorted(range(len(trajs)), key=lambda i: -len(trajs[i].token_ids))
    return [order[s:s + size] for s in range(0, len(order), size)]


@contextmanager
def checkpointing(model):
    """Gradient checkpointing inside the block: the training forward keeps each layer's input only
    and recomputes the rest during backward (one more forward's compute, a fraction of the memory).
    Without it one PPO minibatch of 4 x 820 tokens held about 6 GB of activations per adapter."""
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


def update(policy, trajs: list[Trajectory], cfg: RPRConfig, optims: dict, *, train_actor: bool,
           epochs: int | None = None) -> dict:
    """One PPO (or critic-only) update on a batch of trajectories; returns the step's metrics.

    Memory: every forward runs on one minibatch, cut to its widest episode (`minibatches`); the
    actor's log-probabilities are computed on action tokens only; the critic's loss is
    back-propagated before the actor's forward pass starts (the two share no trainable weight,
    so the gradients are those of the summed loss); training passes use gradient checkpointing."""
    import torch

    from .policy.critic import ACTOR, CRITIC, set_trainable, token_logprobs, using_adapter, values

    tok = policy.tokenizer
    ids, att, mask, rollout_lps, rewards = (x.to(policy.model.device) for x in batch_tensors(
        trajs, cfg.reward, tok.pad_token_id if tok.pad_token_id is not None else 0))
    groups = [(torch.tensor(g, device=ids.device), max(len(trajs[i].token_ids) for i in g))
              for g in minibatches(trajs, cfg.minibatch)]
    old_v = torch.zeros(ids.shape, device=ids.device)
    old_lp = torch.zeros(ids.shape, device=ids.device) if train_actor else None
    with torch.no_grad():
        for mb, w in groups:
            old_v[mb, :w] = values(policy, ids[mb, :w], att[mb, :w])
            if train_actor:
                old_lp[mb, :w] = token_logprobs(policy, ids[mb, :w], att[mb, :w], only=mask[mb, :w])
        adv, ret = advantages_for(cfg, rewards, old_v, mask)
    row = {"losses/explained_variance_before": explained_variance(old_v, ret, mask)}
    if old_lp is not None:
        row["logprobs/rollout_gap"] = float(((old_lp - rollout_lps).abs() * mask).sum() / mask.sum().clamp(min=1))
    if train_actor and cfg.ppo.whiten_advantages:
        # whitened over the whole batch's action tokens, as the loss would over one minibatch of everything
        adv = masked_whiten(adv, mask)
    ppo_cfg = replace(cfg.ppo, whiten_advantages=False)
    set_trainable(policy, actor=train_actor, critic=True)
    policy.model.train()
    stats_all = []
    with checkpointing(policy.model):
        for epoch in range(epochs or cfg.ppo_epochs):
            for mb, w in random.Random(epoch).sample(groups, len(groups)):
                sl = (mb, slice(0, w))
                for o in optims.values():
                    o.zero_grad(set_to_none=True)
                # Each backward runs inside its adapter's block: checkpointing recomputes the layers' forward
                # during backward, and that recomputation must route through the adapter the forward used.
                with using_adapter(policy.model, CRITIC):
                    v = values(policy, ids[sl], att[sl])
                    vloss = cfg.ppo.vf_coef * value_loss(v, ret[sl], mask[sl])
                    vloss.backward()
                if train_actor:
                    with using_adapter(policy.model, ACTOR):
                        lp = token_logprobs(policy, ids[sl], att[sl], only=mask[sl])
                        loss, stats = ppo_loss(lp, old_lp[sl], adv[sl], v.detach(), ret[sl], mask[sl], ppo_cfg)
                        loss.backward()  # v is detached: this reaches the actor only
                else:
                    stats = {"losses/value": float(vloss.detach()),
                             "losses/explained_variance": explained_variance(v.detach(), ret[sl], mask[sl])}
                for name, o in optims.items():
                    if name == "actor" and not train_actor:
                        continue
                    torch.nn.utils.clip_grad_norm_([p for g in o.param_groups for p in g["params"]], cfg.max_grad_norm)
                    o.step()
                stats_all.append(stats)
    policy.model.eval()
    set_trainable(policy, actor=False, critic=False)
    for k in stats_all[0]:
        vals = [s[k] for s in stats_all if s.get(k) == s.get(k)]  # drop NaN
        row[k] = sum(vals) / len(vals) if vals else float("nan")
    row.update({"reward/mean": float(sum(t.rewards[cfg.reward] for t in trajs) / len(trajs)),
                "success/mean": float(sum(t.verifier["strict"] for t in trajs) / len(trajs)),
                "tokens/generated": sum(t.tokens["generated"] for t in trajs)})
    return row


# ---------------------------------------------------------------- the stage

def load_actor_critic(init: str, critic: str | None, model: str = "smollm2-135m"):
    from .policy.critic import add_critic
    from .rsr.stage import load_actor

    policy = load_actor(init, model=model)
    return add_critic(policy, path=critic or None)


def init_value_bias(policy, trajs: list[Trajectory], reward: str) -> float | None:
    """A fresh critic (no saved one loaded) starts its value head's bias at the first batch's mean reward,
    so that its values begin at the right level instead of at 0; return that mean, or None for a critic
    that was loaded (inherited or resumed), which is left as it is. Call it with the whole batch, before
    any sharding, so that every rank sets the same bias."""
    import torch

    if not getattr(policy, "critic_fresh", False):
        return None
    mean = sum(t.rewards[reward] for t in trajs) / len(trajs)
    with torch.no_grad():
        policy.value_head.bias.fill_(mean)
    policy.critic_fresh = False
    return mean


def make_optimizers(policy, cfg: RPRConfig) -> dict:
    import torch

    from .policy.critic import actor_parameters, critic_parameters

    return {"actor": torch.optim.AdamW(actor_parameters(policy), lr=cfg.actor_lr, weight_decay=0.0),
            "critic": torch.optim.AdamW(critic_parameters(policy), lr=cfg.critic_lr, weight_decay=0.0)}


def schedule(cfg: RPRConfig) -> list[tuple[str, int]]:
    """The stage's steps in order: ('warmup', i), ('calibration', i), ('joint', i)."""
    n_warm = max(1, -(-cfg.warmup_tasks // cfg.batch_tasks)) if cfg.warmup_tasks else 0
    return ([("warmup", i) for i in range(n_warm)] + [("calibration", i) for i in range(cfg.calibration_steps)]
            + [("joint", i) for i in range(cfg.steps)])


def step_batches(cfg: RPRConfig, tasks: list) -> list[tuple[str, list]]:
    """(phase, tasks) for every step of the schedule: warm-up tasks first, then the training tasks in turn
    (a fixed shuffle of the pool by `cfg.seed`). Pure, so a sharded run cuts the same batches."""
    order = tasks[:]
    random.Random(cfg.seed).shuffle(order)
    warm, train = order[:cfg.warmup_tasks], order[cfg.warmup_tasks:] or order
    out = []
    for k, (phase, i) in enumerate(schedule(cfg)):
        if phase == "warmup":
            out.append((phase, warm[i * cfg.batch_tasks:(i + 1) * cfg.batch_tasks]))
        else:
            j = (k * cfg.batch_tasks) % len(train)
            out.append((phase, (train[j:] + train[:j])[:cfg.batch_tasks]))
    return out


def step_rollout(cfg: RPRConfig, k: int) -> RolloutConfig:
    return RolloutConfig(**{**cfg.rollout.to_dict(), "seed": cfg.seed * 1000 + k})


def _finished_steps(d: Path) -> list[Path]:
    return sorted(p.parent for p in d.glob("step-*/DONE"))


def prune_old_steps(d: Path, keep: int = 2) -> None:
    """Drop the weights and optimizer states (optim.pt, or a sharded run's optim-rank*.pt) of all but the newest
    `keep` finished steps: a kill before the next DONE resumes from the newest; one spare."""
    import shutil

    for old in _finished_steps(d)[:-keep]:
        for part in old.iterdir():
            if part.name in ("actor", "critic") or part.name.startswith("optim"):
                shutil.rmtree(part, ignore_errors=True) if part.is_dir() else part.unlink(missing_ok=True)


def run_rpr(run: Path, cycle: int, cfg: RPRConfig | None = None, *, progress: bool = False,
            name: str | None = None) -> dict:
    """Run (or resume) the stage in DIR/rpr-N (or DIR/NAME); return a summary."""
    import shutil

    import torch

    from .policy.critic import save_critic
    from .rsr.sft import save_actor
    from .rewards import family_divisors
    from .records import write_json_atomic, write_jsonl_atomic
    from .rsr.stage import config_file, pool_tasks
    from .tasks import family_check_counts

    d = Path(run) / (name or f"rpr-{cycle}")
    d.mkdir(parents=True, exist_ok=True)
    cfg = config_file(d, cfg, RPRConfig)
    if (d / "DONE").is_file():
        return json.loads((d / "summary.json").read_text())
    tasks = pool_tasks(run, cfg)
    divisors = family_divisors(family_check_counts(tasks))  # D_f per family, for FDR and SPR
    batches = step_batches(cfg, tasks)
    policy = optims = None
    t_stage = time.monotonic()
    for k, (phase, batch) in enumerate(batches):
        step = d / f"step-{k:03d}"
        if (step / "DONE").is_file():
            continue
        if policy is None:  # loaded only when a step is left to run
            done = _finished_steps(d)
            last = done[-1] if done else None
            policy = load_actor_critic(str(last / "actor") if last else cfg.init,
                                       str(last / "critic") if last else cfg.critic_from, cfg.model)
            optims = make_optimizers(policy, cfg)
            if last is not None:
                saved = torch.load(last / "optim.pt", weights_only=False)
                for name_, o in optims.items():
                    o.load_state_dict(saved[name_])
        t0 = time.monotonic()
        trajs = run_episodes(policy, [(t, k) for t in batch], step_rollout(cfg, k), policy_name=f"rpr-{cycle}:{k}",
                             reward_divisors=divisors, progress=progress)
        t1 = time.monotonic()
        bias = init_value_bias(policy, trajs, cfg.reward)
        row = update(policy, trajs, cfg, optims, train_actor=phase == "joint",
                     epochs=cfg.warmup_epochs if phase == "warmup" else None)
        if bias is not None:
            row["critic/bias_init"] = bias
        row.update({"step": k, "phase": phase, "rollout_s": round(t1 - t0, 1),
                    "update_s": round(time.monotonic() - t1, 1)})
        # a step is finished once its DONE exists; a killed step is redone from the previous step's weights
        if step.exists():
            shutil.rmtree(step)
        step.mkdir()
        save_actor(policy, step / "actor")
        save_critic(policy, step / "critic")
        torch.save({name_: o.state_dict() for name_, o in optims.items()}, step / "optim.pt")
        (step / "trajectories.jsonl").write_text("".join(t.to_json() + "\n" for t in trajs))
        write_json_atomic(step / "metrics.json", row)
        (step / "DONE").write_text("")
        prune_old_steps(d)
    steps = _finished_steps(d)
    metrics = [json.loads((s / "metrics.json").read_text()) for s in steps]
    write_jsonl_atomic(d / "metrics.jsonl", metrics)
    for part in ("actor", "critic"):
        if (d / part).exists():
            shutil.rmtree(d / part)
        shutil.copytree(steps[-1] / part, d / part)
    summary = {"steps": len(metrics), "phases": {p: sum(m["phase"] == p for m in metrics)
                                                 for p in ("warmup", "calibration", "joint")},
               "explained_variance": [m.get("losses/explained_variance_before") for m in metrics],
               "step_s": [round(m["rollout_s"] + m["update_s"], 1) for m in metrics],
               "wall_s_this_run": round(time.monotonic() - t_stage, 1),
               "actor": str(d / "actor"), "critic": str(d / "critic")}
    write_json_atomic(d / "summary.json", summary)
    (d / "DONE").write_text("")
    return summary
