"""The RPR stage: PPO with a learned critic that can be inherited from the previous cycle.

One loop that reads top to bottom (CleanRL's order):

    warm-up       (a fresh critic only) one pass over the warm-up tasks, actor frozen: the critic learns values
    calibration   `calibration_steps` critic-only steps on training batches
    joint         `steps` PPO updates of actor and critic together
    each step:    B tasks, one rollout each (plain harness) -> reward (S | FDR | SPR)
                  -> values (critic) -> TB-GAE or GAE advantages -> minibatches
                  -> ppo_loss -> actor and critic optimizers -> metrics.jsonl

Every episode ends with the verifier's verdict, so every episode is terminal for the
estimator (no bootstrap; `advantages` documents the bootstrap for cut sequences).
"Old" log-probabilities are recomputed with the actor before the update, in the same
forward as training, so the first ratio is exactly 1; the gap to the rollout's own
log-probabilities (sampled at `rollout.temperature`) is logged as `logprobs/rollout_gap`, and where the
rollout's distribution differs from the training forward's the policy loss is weighted by truncated
importance weights on it (`RPRConfig.rollout_correction`; `tis/on`, `tis/weight_mean`, `tis/truncated_frac`).

Files in `DIR/rpr-N/`: config.json; step-KKK/ per step (rollouts.jsonl and rollout.json once
rolled out; then metrics.json, trajectories.jsonl, world.json, and for the newest two steps
actor/, critic/, optim-rank*.pt; DONE last: the protocol of `roll_out_step` and `update_step`,
which scale_up runs too), so a killed run resumes at the first unfinished step, at its update
if its rollouts are whole; at the end metrics.jsonl, actor/, critic/, summary.json and DONE. Learning rates are scaled for LoRA on a 135M model:
the paper's 5e-7 (actor) and 1.5e-5 (critic) are for full weights of a 27B model; LoRA
needs larger steps, so the defaults keep the paper's ordering (critic faster than actor)
at 1e-4 and 5e-4, from a measured sweep (`python -m rsi_lite.bench.update --actor-lr ...`) and runs.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..rollout.engine import RolloutConfig, run_episodes
from ..rollout.trajectory import Trajectory, write_trajectories
from ..rundir import StageDir, rpr_dir
from ..timing import CLOCK
from ..tracking import Curves
from .batches import (
    PROBE_SEED,
    batch_rule,
    kind_map,
    probe_curves,
    probe_jobs,
    probe_kinds,
    probe_points,
    probe_row,
    schedule,
    step_jobs,
)
from .config import RPRConfig
from .update import update

# ---------------------------------------------------------------- the stage

def load_actor_critic(init: str, critic: str | None, model: str = "smollm2-135m", dtype: str = "float32"):
    from ..policy.actor import load_actor
    from ..policy.critic import add_critic

    policy = load_actor(init, model=model, dtype=dtype)
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

    from ..policy.critic import actor_parameters, critic_parameters

    return {"actor": torch.optim.AdamW(actor_parameters(policy), lr=cfg.actor_lr, weight_decay=0.0),
            "critic": torch.optim.AdamW(critic_parameters(policy), lr=cfg.critic_lr, weight_decay=0.0)}


def step_rollout(cfg: RPRConfig, k: int, *, probe: bool = False) -> RolloutConfig:
    """Step k's rollout settings (a probe's: the same, without the per-turn verdicts only training reads)."""
    turns = cfg.reward_timing == "turn" and not probe
    return RolloutConfig(**{**cfg.rollout.to_dict(), "seed": cfg.seed * 1000 + k, "verify_turns": turns})


def prune_old_steps(d: Path, keep: int = 2) -> None:
    """Drop the weights and optimizer states (optim-rank*.pt) of all but the newest
    `keep` finished steps: a kill before the next DONE resumes from the newest; one spare."""
    import shutil

    for old in StageDir(d).finished()[:-keep]:
        for part in old.path.iterdir():
            if part.name in ("actor", "critic") or part.name.startswith("optim"):
                shutil.rmtree(part, ignore_errors=True) if part.is_dir() else part.unlink(missing_ok=True)


# ---------------------------------------------------------------- one step, written once
#
# `run_rpr` runs a step with these two functions, the rollouts first and the update second, so that a step
# killed between them resumes at its update (one process; at scale the kit runs on verl, scale_up/README.md).
# The files:
#   step-K/rollouts.jsonl, rollout.json      the batch's episodes and how they were drawn (rollouts.jsonl last:
#                                            its presence means the rollouts are whole)
#   step-K/actor/, critic/, optim-rank0.pt, world.json, metrics.json, trajectories.jsonl, DONE   the update
#                                            (the optimizer file and world.json keep the names sharded runs of
#                                            earlier versions wrote, so their run directories still resume)
# A step is finished once its DONE exists. Killed after its rollouts, a step resumes at the update, from the
# previous step's weights (the rollouts' own); killed before, it rolls out again.

def roll_out_step(policy, cfg: RPRConfig, tasks, d: Path, k: int, divisors: dict, *, name: str, kinds=None,
                  rollout: RolloutConfig | None = None, progress: bool = False) -> None:
    """Step k's batch (`step_jobs`: the batch rule reads the earlier steps' verdicts in d) rolled out by
    `policy`, written to d/step-K."""
    from ..records import write_json_atomic

    step = StageDir(d).step(k).path
    phase, jobs, drew = step_jobs(cfg, tasks, d, k, kinds)
    t0 = time.monotonic()
    trajs = run_episodes(policy, jobs, rollout or step_rollout(cfg, k), policy_name=f"{name}:{k}",
                         reward_divisors=divisors, progress=progress)
    if cfg.shadow_flags:
        flag_step(trajs, tasks, cfg, divisors)
    step.mkdir(parents=True, exist_ok=True)
    write_json_atomic(step / "rollout.json", {"rollout_s": round(time.monotonic() - t0, 1), "phase": phase,
                                              "batch": drew})
    write_trajectories(trajs, step / "rollouts.jsonl")


def flag_step(trajs: list, tasks, cfg: RPRConfig, divisors: dict) -> None:
    """Each success's `verifier["flags"]` (`verify.shadow.success_flags`); with `flagged_as_failure`, a flagged
    success's rewards recomputed as a failure's (kept as `rewards_unflagged`)."""
    from ..algos.rewards import DEFAULT_DIVISOR, compute_reward
    from ..verify.shadow import flag_successes

    flag_successes(trajs, backend=cfg.rollout.backend, tasks=tasks, workers=cfg.rollout.workers)
    for t in trajs:
        if t.verifier.get("flags") and cfg.flagged_as_failure:
            t.verifier["rewards_unflagged"] = dict(t.rewards)
            failed = {**t.verifier, "strict": 0}
            t.rewards = {key: compute_reward(key, failed, divisor=divisors.get(t.family, DEFAULT_DIVISOR)) for key in t.rewards}


def update_step(policy, optims: dict, cfg: RPRConfig, d: Path, k: int, replay=None) -> dict:
    """Step k's update on d/step-K/rollouts.jsonl (with `replay`, the replay term's examples: `rpr.replay`), then its
    files (see above); return its metrics row."""
    import shutil

    import torch

    from ..policy.actor import save_actor
    from ..policy.critic import save_critic
    from ..rollout.trajectory import read_trajectories

    step = StageDir(d).step(k)
    trajs = read_trajectories(step / "rollouts.jsonl")
    info = step.read("rollout.json")
    phase = schedule(cfg)[k][0]
    bias = init_value_bias(policy, trajs, cfg.reward)
    t1 = time.monotonic()
    with CLOCK.phase("train/ppo"):
        row = update(policy, trajs, cfg, optims, train_actor=phase == "joint",
                     epochs=cfg.warmup_epochs if phase == "warmup" else None, step=k, replay=replay)
    if bias is not None:
        row["critic/bias_init"] = bias
    earlier = [s.read("metrics.json") for s in StageDir(d).finished()]
    successes = sum(bool(t.verifier.get("strict")) for t in trajs)
    flagged = sum(bool(t.verifier.get("flags")) for t in trajs)
    any_success = int(successes > 0)
    drew = info.get("batch", {})
    row.update({"step": k, "phase": phase, "rollout_s": info.get("rollout_s", 0.0),
                "update_s": round(time.monotonic() - t1, 1), "world": 1,
                # the batch's figures have this one owner (`update` reports the losses, not these)
                "success/mean": successes / len(trajs),
                "reward/mean": sum(t.rewards[cfg.reward] for t in trajs) / len(trajs),
                "tokens/generated": sum(t.tokens["generated"] for t in trajs),
                # successes that may be pretending (`flag_step`): how many, and their share of the successes
                "success/flagged": flagged, "success/flagged_share": flagged / max(1, successes),
                "batch/rule": drew.get("rule"), "batch/tasks": drew.get("tasks"), "batch/learnable": drew.get("learnable"),
                "batch/explore": drew.get("explore"), "batch/kinds": drew.get("kinds"), "success/any": any_success,
                "success/batches_with_any": (sum(m.get("success/any", 0) for m in earlier) + any_success)
                / (len(earlier) + 1)})
    torch.save({name: o.state_dict() for name, o in optims.items()}, step / "optim-rank0.pt")
    save_actor(policy, step / "actor")
    save_critic(policy, step / "critic")
    shutil.copyfile(step / "rollouts.jsonl", step / "trajectories.jsonl")
    step.write("world.json", {"world": 1})
    step.write("metrics.json", row)
    step.mark_done()
    prune_old_steps(d)
    return row


def probe_episodes(cfg: RPRConfig, tasks: list, kinds: dict[str, str], episodes, first: dict | None = None
                   ) -> tuple[list[Trajectory], list[str] | None]:
    """A probe's episodes, run by `episodes(jobs)`, and the kinds topped up to `cfg.probe_kind_episodes` (None when
    the stage tops up none: the kind rule with `probe_kind_episodes` only). The first probe (`first` None) finds the
    learnable kinds in a pass over the probe tasks, then runs their extra episodes in a second; a later probe runs
    the first one's jobs, the same kinds topped up (`first["learnable_kinds"]`), in one pass."""
    topped = cfg.probe_kind_episodes > 0 and cfg.batch_rule == "kinds"
    if first is not None:
        learnable = first.get("learnable_kinds", []) if topped else None
        return episodes(probe_jobs(cfg, tasks, learnable or [])), learnable
    jobs = probe_jobs(cfg, tasks)
    trajs = episodes(jobs)
    if not topped:
        return trajs, None
    learnable = probe_kinds(trajs, kinds)
    more = probe_jobs(cfg, tasks, learnable)[len(jobs):]
    return trajs + (episodes(more) if more else []), learnable


def load_optimizers(optims: dict, step: Path, rank: int, world: int) -> None:
    """The optimizer states a finished step saved for this rank (a stage continues with as many ranks)."""
    import torch

    saved_world = StageDir(step).read("world.json", {"world": 1})["world"]
    if saved_world != world:
        raise ValueError(f"{step}/world.json: the optimizer states were written by {saved_world} rank(s), "
                         f"this run has {world}")
    saved = torch.load(step / f"optim-rank{rank}.pt", weights_only=False)
    for name, o in optims.items():
        o.load_state_dict(saved[name])


def run_rpr(run: Path, cycle: int, cfg: RPRConfig | None = None, *, progress: bool = False,
            name: str | None = None) -> dict:
    """Run (or resume) the stage in DIR/rpr-N (or DIR/NAME); return a summary.

    The stage is a sequence of probes and steps (`probe_points`, `schedule`), each in its own directory with a
    DONE marker, so a killed run continues at the first unfinished one."""
    import shutil

    from ..algos.rewards import family_divisors
    from ..records import atomic_dir, write_jsonl_atomic
    from ..tasks import family_check_counts
    from ..tasks.suites import pool_tasks

    if cfg is not None:
        batch_rule(cfg)  # an unknown rule fails here, before config.json is written and the first probe runs
    stage = rpr_dir(run, cycle, name)
    d = stage.path
    d.mkdir(parents=True, exist_ok=True)
    cfg = stage.config(cfg, RPRConfig)
    if stage.done:
        return stage.read("summary.json")
    tasks = pool_tasks(run, cfg)
    if not tasks:
        raise ValueError(f"{d / 'config.json'}: pool_difficulty / pool_families leave no task of the pool")
    divisors = family_divisors(family_check_counts(tasks))  # D_f per family, for FDR and SPR
    plan = schedule(cfg)
    for s in stage.finished("step"):  # a resume under another schedule would mislabel every later step
        got = s.read("metrics.json").get("phase")
        if s.number < len(plan) and got != plan[s.number][0]:
            raise ValueError(f"{s.path / 'metrics.json'}: phase {got!r}, where this stage's schedule has "
                             f"{plan[s.number][0]!r} (a stage started by code whose schedule differed: an "
                             "inherited critic was warmed up again before 2026-12-06); finish it with the code "
                             "that started it, or remove the stage's directory to run it afresh")
    n_steps = len(plan)
    events = sorted([(k, 0) for k in probe_points(cfg)] + [(k, 1) for k in range(n_steps)])
    state = {"policy": None, "optims": None, "replay": None}
    if cfg.replay:  # read before anything runs, so a missing dataset stops the stage at once
        from .replay import Replay, replay_path

        state["replay"] = Replay.load(replay_path(cfg), cfg.replay_batch, by=cfg.replay_by)
    t_stage = time.monotonic()
    curves = Curves(cfg.report_to, d / "tensorboard")

    def actor():
        if state["policy"] is None:  # loaded only when something is left to run
            done = stage.finished()
            last = done[-1].path if done else None
            state["policy"] = load_actor_critic(str(last / "actor") if last else cfg.init,
                                                str(last / "critic") if last else cfg.critic_from, cfg.model, cfg.dtype)
            if cfg.ref_kl:  # the reference is the stage's incoming actor, also when it resumes from a later step
                from ..policy.critic import add_reference

                add_reference(state["policy"], cfg.init)
            state["optims"] = make_optimizers(state["policy"], cfg)
            if last is not None:
                load_optimizers(state["optims"], last, 0, 1)
        return state["policy"]

    kinds = kind_map(tasks)  # every task's kind, once: the probes count by it, the kind rule draws by it
    for k, is_step in events:
        part = stage.step(k) if is_step else stage.probe(k)
        if part.done:
            continue
        if not is_step:
            t0 = time.monotonic()

            def episodes(jobs):
                return run_episodes(actor(), jobs, step_rollout(cfg, PROBE_SEED, probe=True),
                                    policy_name=f"rpr-{cycle}:probe-{k}", reward_divisors=divisors, progress=progress)

            first = stage.probe(0).read("metrics.json") if k else None
            trajs, learnable = probe_episodes(cfg, tasks, kinds, episodes, first)
            row = {**probe_row(trajs, k, kinds), "rollout_s": round(time.monotonic() - t0, 1),
                   **({"learnable_kinds": learnable} if learnable is not None else {})}
            with atomic_dir(part.path) as tmp:  # a killed probe leaves nothing behind: it runs again whole
                write_trajectories(trajs, tmp / "trajectories.jsonl")
                StageDir(tmp).write("metrics.json", row)
                StageDir(tmp).mark_done()
            curves.add({key: row[key] for key in ("pool_success", "tasks_solved", "tasks_learnable")}, k, prefix="probe/")
            continue
        if not (part / "rollouts.jsonl").is_file():
            roll_out_step(actor(), cfg, tasks, d, k, divisors, name=f"rpr-{cycle}", kinds=kinds, progress=progress)
        row = update_step(actor(), state["optims"], cfg, d, k, state["replay"])
        curves.add(row, k)
    curves.close()
    steps = stage.finished()
    metrics = [s.read("metrics.json") for s in steps]
    probes = [p.read("metrics.json") for p in stage.finished("probe")]
    write_jsonl_atomic(d / "metrics.jsonl", metrics)
    write_jsonl_atomic(d / "probes.jsonl", probes)
    for part in ("actor", "critic"):
        if (d / part).exists():
            shutil.rmtree(d / part)
        shutil.copytree(steps[-1] / part, d / part)
    summary = {"steps": len(metrics), "phases": {p: sum(m["phase"] == p for m in metrics)
                                                 for p in ("warmup", "calibration", "joint")},
               "batch_rule": cfg.batch_rule,
               "explained_variance": [m.get("losses/explained_variance_before") for m in metrics],
               "success_per_step": [m.get("success/mean") for m in metrics],
               "batches_with_any_success": metrics[-1].get("success/batches_with_any") if metrics else None,
               "probes": probe_curves(probes),
               "step_s": [round(m["rollout_s"] + m["update_s"], 1) for m in metrics],
               "probe_s": [p.get("rollout_s") for p in probes],
               "wall_s_this_run": round(time.monotonic() - t_stage, 1),
               "actor": str(d / "actor"), "critic": str(d / "critic")}
    stage.write("summary.json", summary)
    stage.mark_done()
    return summary
