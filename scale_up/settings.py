"""The 27B verl config beside the laptop's profile, readable without verl (notebook 07 runs in the kit's
environment, which has neither verl nor Hydra).

`read_config` loads scale_up/configs/rsi_27b.yaml as plain YAML: the values this file sets, plus the two that
verl's ppo_trainer.yaml derives from them (the rollout's prompt and response lengths, interpolated from
`data.max_prompt_length` / `data.max_response_length`). That is all `scale_up.memory.plan` and `side_by_side`
read; tests/scale_up/test_memory.py checks the plan of this reading equals the plan of the config Hydra composes
over verl's defaults, so the two cannot drift.
"""

from __future__ import annotations

from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "configs"

# (what, where in the verl config, where in the kit's Profile, how the verl value reads as the kit's)
ROWS = [
    ("tasks per PPO step", "data.train_batch_size", "rpr.batch_tasks", None),
    ("ratio clip low", "actor_rollout_ref.actor.clip_ratio_low", "rpr.ppo.ratio_low", lambda v: round(1 - v, 4)),
    ("ratio clip high", "actor_rollout_ref.actor.clip_ratio_high", "rpr.ppo.ratio_high", lambda v: round(1 + v, 4)),
    ("critic-only steps", "trainer.critic_warmup", "rpr.calibration_steps", lambda v: v - 1),
    ("actor lr, RPR-1", "actor_rollout_ref.actor.optim.lr", "rpr.actor_lr", None),
    ("critic lr", "critic.optim.lr", "rpr.critic_lr", None),
    ("TB-GAE gamma (per turn)", "algorithm.gamma", "rpr.gamma_turn", None),
    ("TB-GAE lambda (per turn)", "algorithm.lam", "rpr.lam_turn", None),
    ("truncated IS cap", "algorithm.rollout_correction.rollout_is_threshold", "rpr.ppo.tis_cap", None),
    ("entropy coefficient", "actor_rollout_ref.actor.entropy_coeff", "rpr.ppo.ent_coef", None),
    ("reward", "rsi.reward", "rpr.reward", None),
    ("max turns", "rsi.max_turns", "rpr.rollout.max_turns", None),
    ("new tokens per turn", "rsi.max_new_tokens", "rpr.rollout.max_new_tokens", None),
    ("context (tokens)", "rsi.context_budget", "rpr.rollout.context_budget", None),
    ("rollout temperature", "actor_rollout_ref.rollout.temperature", "rpr.rollout.temperature", None),
]


def read_config(path: str | Path = CONFIGS / "rsi_27b.yaml") -> dict:
    """The config file's own values as nested dicts, with the rollout lengths verl derives from `data`."""
    import yaml

    cfg = yaml.safe_load(Path(path).read_text())
    rollout = cfg.setdefault("actor_rollout_ref", {}).setdefault("rollout", {})
    rollout.setdefault("prompt_length", cfg["data"]["max_prompt_length"])
    rollout.setdefault("response_length", cfg["data"]["max_response_length"])
    return cfg


SERVE = True
"""Whether the kit's generation jobs run on verl's vLLM replicas over the cluster by default (`CycleConfig.serve`;
`kit_jobs.serving` reads a cycle.json without the field the same way)."""

EPISODE_FIELDS = ("action_format", "max_turns", "max_new_tokens", "context_budget", "observation_chars",
                  "command_timeout")
"""The episode's shape, which every generation job of a 27B cycle takes from the config's `rsi` section, the one
verl's agent loop runs PPO's episodes with (`agent_loop.RSIEpisodeConfig`): self-rewrite's discovery and re-solves
and the evaluations act in the same format, over as many turns and as long a context, as the PPO they feed and
measure (SFT on bash actions would teach a format PPO never samples). The harness, the temperature, the seed and
the episodes at once stay each job's own."""


def episode_fields(path: str | Path = CONFIGS / "rsi_27b.yaml", overrides=()) -> dict:
    """`EPISODE_FIELDS` of the config's `rsi` section, as `RolloutConfig` fields, with the `rsi.FIELD=VALUE` ones
    among Hydra `overrides` over them (those the PPO jobs get too: `CycleConfig.overrides`); a missing field is an
    error naming the file and the field."""
    import yaml

    rsi = dict(read_config(path).get("rsi") or {})
    for o in overrides:
        key, _, value = o.lstrip("+").partition("=")
        if key.startswith("rsi.") and key[4:] in EPISODE_FIELDS:
            rsi[key[4:]] = yaml.safe_load(value)
    if missing := [f for f in EPISODE_FIELDS if f not in rsi]:
        raise ValueError(f"{path}: rsi.{', rsi.'.join(missing)} missing (the episode every generation job shares)")
    return {f: rsi[f] for f in EPISODE_FIELDS}


def at(obj, path: str, default=...):
    """`obj`'s value at a dotted path: nested dicts, Hydra's DictConfig, or dataclasses (the kit's Profile)."""
    for part in path.split("."):
        if isinstance(obj, dict) or hasattr(obj, "keys"):
            if part not in obj:
                if default is ...:
                    raise KeyError(path)
                return default
            obj = obj[part]
        else:
            obj = getattr(obj, part)
    return obj


def side_by_side(verl_cfg, *profiles) -> list[tuple]:
    """One row per setting: (what, the verl config's value in the kit's terms, each profile's value)."""
    rows = []
    for label, verl_path, kit_path, as_kit in ROWS:
        v = at(verl_cfg, verl_path)
        rows.append((label, as_kit(v) if as_kit else v, *(at(p, kit_path) for p in profiles)))
    return rows


def table(rows: list[tuple], headers: tuple[str, ...]) -> str:
    """The rows as fixed-width text."""
    out = [f"{headers[0]:26}" + "".join(f"{h:>16}" for h in headers[1:])]
    out += [f"{r[0]:26}" + "".join(f"{v!s:>16}" for v in r[1:]) for r in rows]
    return "\n".join(out)
