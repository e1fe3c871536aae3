"""The run-directory protocol, with one owner: where a stage's files live, when it counts as finished, and
which earlier stage's checkpoint and critic a later one starts from.

    RUN/                          one seed's run (`rsi-lite run --out RUN`; seeds other than 0 in RUN/seed-S)
      pool/                       the training pool, written once (DONE)
      rsr-N/  rpr-N/              the stages of cycle N; rsr-N/checkpoint/, rpr-N/actor/ and rpr-N/critic/
      eval-<stage>/               an evaluation
      <stage>/config.json         the stage's config: read back on resume, a different one refused
      rpr-N/step-KKK/, probe-KKK/ one PPO step or probe of the pool, each finished by its own DONE
      <stage>/DONE                written last: the stage (or step) finished; what is in it is whole

Every stage is resumable because of this one rule: a directory without DONE is unfinished, whatever else it
holds, and is picked up where it stopped; a directory with DONE is never run again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .records import read_json, write_json_atomic, write_text_atomic

DONE = "DONE"
"""The marker a stage, step or pool directory gets last, once everything else in it is written."""

STOP = "STOP"
"""`touch RUN/STOP`: a long run stops before its next stage (`rsi-lite run`) or part (`bench.learns`), with nothing
half-done and no interrupted wall in its cost; the same command resumes it (`stop_if_asked`)."""


def stop_if_asked(dirs, before: str, log=print) -> None:
    """Called before a stage or part starts: if `STOP` is in one of `dirs`, remove it, say so and exit 0, so the
    same command resumes the run at `before`. Ctrl-C or SIGTERM stop a stage midway, and its resume redoes the
    unfinished step (and counts the interrupted attempt's wall); a STOP file waits for the boundary."""
    for d in dict.fromkeys(Path(x) for x in dirs):
        f = d / STOP
        if f.is_file():
            f.unlink(missing_ok=True)
            log(f"[stop] {f} asked to stop: stopped before {before}; the same command resumes there")
            raise SystemExit(0)


@dataclass(frozen=True)
class StageDir:
    """One stage's (or step's) directory: `d / "x.json"` is a path in it, `d.done` says whether it finished."""

    path: Path

    def __post_init__(self):
        object.__setattr__(self, "path", Path(self.path))

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    @property
    def number(self) -> int:
        """k of a `step-KKK` or `probe-KKK` directory."""
        return int(self.path.name.rsplit("-", 1)[1])

    @property
    def done(self) -> bool:
        return (self.path / DONE).is_file()

    def mark_done(self) -> None:
        """Write DONE, last: everything the stage wrote before is whole."""
        write_text_atomic(self.path / DONE, "")

    def unmark(self) -> None:
        """Remove DONE: the directory is unfinished again (a run extended by a new branch)."""
        (self.path / DONE).unlink(missing_ok=True)

    def read(self, name: str, default=...):
        """The JSON file `name` in this directory; `default` when it is missing (an error without one)."""
        path = self.path / name
        if default is not ... and not path.is_file():
            return default
        return read_json(path)

    def write(self, name: str, obj) -> Path:
        """Write `obj` as the JSON file `name`, atomically."""
        write_json_atomic(self.path / name, obj)
        return self.path / name

    def step(self, k: int) -> StageDir:
        """PPO step k's directory (`step-KKK`)."""
        return StageDir(self.path / f"step-{k:03d}")

    def probe(self, k: int) -> StageDir:
        """The pool probe before step k (`probe-KKK`)."""
        return StageDir(self.path / f"probe-{k:03d}")

    def finished(self, kind: str = "step") -> list[StageDir]:
        """The finished `step-*` (or `probe-*`) directories, oldest first."""
        return [StageDir(p.parent) for p in sorted(self.path.glob(f"{kind}-*/{DONE}"))]

    def trajectory_files(self, kind: str = "step") -> list[Path]:
        """The `step-*` (or `probe-*`) directories' trajectories.jsonl, oldest first: every episode a stage's
        steps (or probes) kept, also while it runs."""
        return sorted(self.path.glob(f"{kind}-*/trajectories.jsonl"))

    def config(self, cfg, cls):
        """The stage's config (`config_file`)."""
        return config_file(self.path, cfg, cls)


# ---------------------------------------------------------------- where a seed's stages live, which starts from which

def seed_dir(out: Path, seeds, s: int) -> Path:
    """Where seed s of a run lives: the run directory itself when it has one seed, else RUN/seed-S."""
    return Path(out) if len(seeds) == 1 else Path(out) / f"seed-{s}"


def rsr_dir(run: Path, cycle: int, suffix: str = "") -> StageDir:
    return StageDir(Path(run) / f"rsr-{cycle}{suffix}")


def rpr_dir(run: Path, cycle: int, name: str | None = None) -> StageDir:
    """RPR-N's directory (`rpr-N`), or a branch of it by `name` (a control, `rpr-N-from-base`)."""
    return StageDir(Path(run) / (name or f"rpr-{cycle}"))


def rsr_checkpoint(run: Path, cycle: int) -> Path:
    """The actor self-rewrite cycle N trained."""
    return rsr_dir(run, cycle) / "checkpoint"


def rpr_actor(run: Path, cycle: int, name: str | None = None) -> Path:
    return rpr_dir(run, cycle, name) / "actor"


def inherited_critic(run: Path, cycle: int) -> str:
    """The critic RPR-N inherits: RPR-(N-1)'s (the paper's critic inheritance across cycles); '' (a fresh
    critic) in cycle one."""
    return str(rpr_dir(run, cycle - 1) / "critic") if cycle > 1 else ""


# ---------------------------------------------------------------- a stage's config

PATH_FIELDS = ("init", "critic_from", "pool", "model", "replay_from")
"""Config fields that may hold a path: compared as the files they name, not as strings."""


def _same_files(d: dict) -> dict:
    return {k: os.path.realpath(v) if k in PATH_FIELDS and isinstance(v, str) and "/" in v else v
            for k, v in d.items()}


def config_file(d: Path, cfg, cls):
    """A stage's config: the one on disk when resuming (a changed config would mix two stages' files).
    Paths are compared as the files they name, so `runs/x` and `/home/me/runs/x` are the same run."""
    path = Path(d) / "config.json"
    if path.is_file():
        on_disk = cls.from_dict(read_json(path))
        asked, saved = (_same_files(cfg.to_dict()), _same_files(on_disk.to_dict())) if cfg is not None else ({}, {})
        if asked != saved:
            diff = sorted(k for k in asked.keys() | saved.keys() if asked.get(k) != saved.get(k))
            raise ValueError(f"{path}: the stage was started with another config ({', '.join(diff)} differ); "
                             "use a new run directory")
        return on_disk
    cfg = cfg or cls()
    write_json_atomic(path, cfg.to_dict())
    return cfg
