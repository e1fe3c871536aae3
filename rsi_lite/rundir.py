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
