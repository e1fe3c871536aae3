"""The loop's profiles: every stage's config for `rsi-lite run --profile tiny|cpu|gpu|smoke`, and how each phase
is evaluated (`EvalConfig`). `run.json` keeps the profile a run started with, so a resumed run uses the same one."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..rollout.engine import RolloutConfig
from ..rpr.config import RPRConfig
from ..rsr.config import RSRConfig

TABLE_SUITES = ["core", "hard", "multi", "extreme"]
"""The paper's four columns (TB 2.1, TB Hard, TB 3.0, TB 4.0) in the mini suites."""

@dataclass
class EvalConfig:
    """How every phase is evaluated."""

    suites: list[str] = field(default_factory=lambda: TABLE_SUITES + ["swr", "lhtb", "val"])
    """Suites to run; `val` must be among them (checkpoints are selected on it)."""
    k: int | dict = 3
    """Runs per task (Mean@k); a dict gives a count per suite (`"*"` for the others, `evaluate.suite_k`)."""
    limit: int | dict | None = None
    """Only `limit` tasks of each suite, evenly spaced through it so every family is sampled (small
    profiles; the suites are ordered by family); a dict gives a count per suite (`"*"` for the others,
    `evaluate.suite_limit`); None: all of them."""
    heldout_per_kind: int = 0
    """After each RPR phase, this many fresh instances of every kind its first probe found learnable (solved
    sometimes, not always: what PPO trains on), evaluated before and after the phase, `core`'s k runs each
    (`rpr.batches.write_heldout`): whether refinement learned something that carries to new instances, where the
    whole suites have little room for it. 0: not measured."""
    heldout_min_episodes: int = 0
    """More instances of each kind than `heldout_per_kind` where fewer would give a measurement under this many
    episodes (`rpr.batches.heldout_per_kind`): a 10-point gain needs a few hundred to be told from noise."""
    rollout: RolloutConfig = field(default_factory=lambda: RolloutConfig(
        harness="plain", temperature=0.6, max_turns=3, max_new_tokens=64))
    """The target harness at the paper's evaluation temperature (the continuous engine: every suite's episodes
    share one queue, so the slots stay full from the first suite to the last)."""

    @classmethod
    def from_dict(cls, d: dict) -> "EvalConfig":
        return cls(**{**d, "rollout": RolloutConfig(**d.get("rollout", {}))})


@dataclass
class Profile:
    """Everything a run needs; `run.json` holds it so that a resumed run uses the same one."""

    name: str
    pool_size: int
    """Tasks generated into DIR/pool (disjoint from every evaluation suite)."""
    rsr: RSRConfig
    rpr: RPRConfig
    rpr2_actor_lr: float
    """RPR-2's actor learning rate: lower than RPR-1's, as the paper's retained branch (5e-7 -> 1e-7)."""
    eval: EvalConfig
    model: str = "smollm2-135m"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Profile":
        return cls(**{**d, "rsr": RSRConfig.from_dict(d["rsr"]), "rpr": RPRConfig.from_dict(d["rpr"]),
                      "eval": EvalConfig.from_dict(d["eval"])})


def recipe(name: str) -> dict:
    """A committed stage config from configs/ (the `cpu` profile is made of them)."""
    from ..paths import REPO

    path = REPO / "configs" / name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: a profile's committed recipe is missing (run from a clone of the repository)")
    return json.loads(path.read_text())


def profile(name: str) -> Profile:
    """`tiny`: the README's main job, under 20 minutes on 2 cores. `cpu`: the mini replication
    (a few hours on 2 cores). `gpu`: a larger model and budgets (needs CUDA and the model).
    `smoke`: the smallest run that passes through every code path (tests and notebooks)."""
    # PPO's rollouts are most of a smoke run's time: half the tokens pass through the same code
    short = RolloutConfig(harness="plain", temperature=1.0, max_turns=2, max_new_tokens=24 if name == "smoke" else 48)
    if name in ("tiny", "smoke"):
        s = name == "smoke"
        # the self-rewrite of configs/rsr-tiny.json: configs/rsr-core.json's recipe (the four families discovery
        # opens, runbooks, re-solves, the cuts) at a seventh of its cost: one discovery harness (verifier
        # feedback, which found most of that run's successes) once per task, one source per task, and a
        # shorter, hotter SFT (4 epochs at 6e-4, chosen among the epoch counts docs/experiments.md measured)
        rsr = RSRConfig.from_dict(recipe("rsr-tiny.json"))
        if s:  # every code path, nothing more: two families, one re-solve, one epoch
            rsr.pool_size, rsr.pool_families, rsr.discovery_harnesses = 6, ["file_ops", "text_processing"], ["exemplar"]
            rsr.resolves_per_runbook, rsr.max_examples_per_task, rsr.sft.epochs = 1, 4, 1
            rsr.rollout = RolloutConfig(max_turns=2, max_new_tokens=48, temperature=0.3)
        # PPO on the same curriculum. smoke: batches drawn from the tasks the actor solves sometimes (`frontier`).
        # tiny: configs/rpr-core-ppo-turn-replay-kinds.json's method at a small budget: the kinds the first probe
        # finds learnable, per-turn values, the replay term drawn by kind, and those kinds probed on 16 episodes each
        # before and after the steps
        if s:
            rpr = RPRConfig(warmup_tasks=2, warmup_epochs=2, calibration_steps=1, steps=1, batch_tasks=2, minibatch=2,
                            rollout=short, pool_difficulty=rsr.pool_difficulty, pool_families=rsr.pool_families,
                            probe_samples=1, probe_tasks=2, accumulate=0, ppo_epochs=2)
        else:
            rpr = RPRConfig(warmup_tasks=4, warmup_epochs=2, calibration_steps=1, steps=4, batch_tasks=6, minibatch=3,
                            rollout=short, pool_difficulty=rsr.pool_difficulty, pool_families=rsr.pool_families,
                            batch_rule="kinds", explore=0.0, value_at="turn", gradient_checkpointing=False,
                            probe_samples=2, probe_tasks=12, probe_kind_episodes=16, accumulate=0, ppo_epochs=2,
                            replay=1.0, replay_batch=8, replay_by="kind")
        # 15 of core's 45 tasks three times each (one run of 15 tasks moves by more than the gain the
        # self-rewrite should show: docs/experiments.md), 9 of val's 27 once (evenly spaced: every family); one
        # of each other suite keeps its column (at 135M they read 0, and two tasks would tell no more)
        ev = EvalConfig(k={"core": 2 if s else 3, "*": 1}, limit=1 if s else {"core": 15, "val": 9, "*": 1}, rollout=RolloutConfig(
            harness="plain", temperature=0.6, max_turns=1 if s else 2, max_new_tokens=32 if s else 48))
        return Profile(name, rsr.pool_size, rsr, rpr, rpr.actor_lr / 5, ev)
    if name == "cpu":
        # the mini replication: the committed recipes whose stages were measured one by one (docs/experiments.md):
        # the self-rewrite of configs/rsr-core.json (its gain on core: docs/experiments.md) and the refinement of
        # configs/rpr-core-ppo-turn-replay-kinds.json (configs/learns.json's `ppo-turn-replay`: the paper's PPO with
        # per-turn values and the replay term drawn by kind, which gained on its held-out kinds at two training
        # seeds where the same recipe without the term fell: docs/experiments.md, 2026-12-07, session 8), on one
        # pool of RSR's size; all of core and val,
        # 3 runs each, and 9 tasks of every other suite, evenly spaced (one of each family); each RPR phase's
        # held-out kinds on at least 210 episodes
        rsr = RSRConfig.from_dict(recipe("rsr-core.json"))
        rpr = RPRConfig.from_dict({**recipe("rpr-core-ppo-turn-replay-kinds.json"), "pool_size": rsr.pool_size})
        return Profile(name, rsr.pool_size, rsr, rpr, rpr.actor_lr / 5,
                       EvalConfig(k=3, limit={"core": None, "val": None, "*": 9}, heldout_per_kind=10,
                                  heldout_min_episodes=210))
    if name == "gpu":
        import os

        model = os.environ.get("RSI_LITE_GPU_MODEL", "")
        rsr = RSRConfig(pool_size=1000, discovery_samples=2, resolves_per_runbook=4, planner_transcript_chars=16000,
                        planner_tokens=1024, rollout=RolloutConfig(max_turns=6, max_new_tokens=256, batch_size=64))
        rpr = RPRConfig(pool_size=1000, warmup_tasks=64, steps=20, batch_tasks=32, minibatch=8,
                        rollout=RolloutConfig(harness="plain", temperature=1.0, max_turns=6, max_new_tokens=256,
                                              batch_size=64))
        ev = EvalConfig(k=3, rollout=RolloutConfig(harness="plain", temperature=0.6, max_turns=6,
                                                   max_new_tokens=256, batch_size=64))
        return Profile(name, 1000, rsr, rpr, rpr.actor_lr / 5, ev, model=model)
    raise ValueError(f"profile {name!r}: expected tiny, cpu, gpu or smoke")


def check_gpu_profile(p: Profile) -> None:
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("profile gpu: no CUDA device here (torch.cuda.is_available() is False); use tiny or cpu")
    if not p.model or not (Path(p.model) / "config.json").is_file():
        raise RuntimeError(f"profile gpu: RSI_LITE_GPU_MODEL={p.model!r} is not a local Hugging Face model directory "
                           "(config.json missing); point it at a downloaded instruct model, e.g. Qwen2.5-7B-Instruct")
