"""What every stage does with files and models, owned by none of them: the actor loaded and saved, a stage's
config file, the training pool.

The self-rewrite stage (`rsr.stage`), refinement (`rpr`), the loop and `scale_up/` all call these, so none of
them imports another stage's module for its plumbing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .records import write_json_atomic

BUNDLED = "smollm2-135m"


def load_actor(init: str, quantization: str = "lora", model: str = BUNDLED, dtype: str = "float32"):
    """The actor: a fresh adapter on `model` (`init == "base"`), or the saved adapter in directory `init`."""
    from .policy.model import PolicyConfig, load_policy

    cfg = PolicyConfig(model=model, quantization=quantization, dtype=dtype)
    if init == "base":
        return load_policy(cfg)
    if not (Path(init) / "adapter_config.json").is_file():
        raise FileNotFoundError(f"{init}/adapter_config.json: missing (a stage's init is 'base' or a saved adapter)")
    return load_policy(cfg, adapter_path=init)


def save_actor(policy, path: Path, state_dict: dict | None = None) -> Path:
    """Save the actor adapter so that `path/adapter_config.json` exists (written to a temp dir, then renamed).
    `state_dict`: the model's full state dict when the live one is sharded."""
    from .policy.model import save_adapter

    return save_adapter(policy, "actor", path, state_dict=state_dict)


PATH_FIELDS = ("init", "critic_from", "pool", "model")
"""Config fields that may hold a path: compared as the files they name, not as strings."""


def _same_files(d: dict) -> dict:
    return {k: os.path.realpath(v) if k in PATH_FIELDS and isinstance(v, str) and "/" in v else v
            for k, v in d.items()}


def config_file(d: Path, cfg, cls):
    """A stage's config: the one on disk when resuming (a changed config would mix two stages' files).
    Paths are compared as the files they name, so `runs/x` and `/home/me/runs/x` are the same run."""
    path = d / "config.json"
    if path.is_file():
        on_disk = cls.from_dict(json.loads(path.read_text()))
        asked, saved = (_same_files(cfg.to_dict()), _same_files(on_disk.to_dict())) if cfg is not None else ({}, {})
        if asked != saved:
            diff = sorted(k for k in asked.keys() | saved.keys() if asked.get(k) != saved.get(k))
            raise ValueError(f"{path}: the stage was started with another config ({', '.join(diff)} differ); "
                             "use a new run directory")
        return on_disk
    cfg = cfg or cls()
    write_json_atomic(path, cfg.to_dict())
    return cfg


def pool_tasks(run: Path, cfg):
    """The training pool of a stage's config (`pool`, `pool_size`, and the optional `pool_difficulty` and
    `pool_families` filters): the directory `cfg.pool`, else RUN/pool, written on first use."""
    from .tasks import find_tasks
    from .tasks.suites import write_pool

    if cfg.pool:
        tasks = find_tasks(Path(cfg.pool))
        if not tasks:
            raise FileNotFoundError(f"pool: {cfg.pool} holds no tasks")
    else:
        pool = Path(run) / "pool"
        if not (pool / "DONE").is_file():
            write_pool(pool, cfg.pool_size)
            (pool / "DONE").write_text("")
        tasks = find_tasks(pool)
    difficulty, families = getattr(cfg, "pool_difficulty", None), getattr(cfg, "pool_families", None)
    return [t for t in tasks if (not difficulty or t.difficulty in difficulty) and (not families or t.family in families)]
