"""What an RPR stage's batches drew: episodes, verified successes and shadow-flagged successes per task kind, over
its joint steps (or a range of steps, or every phase). Forgetting and learning are read against it: a kind that
fell without being drawn, one drawn at 28% success.

    python -m rsi_lite.report.drawn runs/s8-kinds/rpr-1            # the joint steps; the pool beside the stage
    python -m rsi_lite.report.drawn runs/s8-kinds/rpr-1 --steps 2:8 --all-phases --pool runs/s8-kinds/pool
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..rollout.trajectory import Trajectory, read_trajectories
from ..rundir import StageDir


def drawn(trajs: list[Trajectory], kinds: dict[str, str]) -> dict[str, tuple[int, int, int]]:
    """kind -> (episodes, strict successes, successes the shadow twins flagged) of `trajs`, most drawn first.
    `kinds` maps a task's name to its kind; a task it does not name is a KeyError naming it (a wrong pool is never
    counted as nothing)."""
    out: dict[str, list[int]] = {}
    for t in trajs:
        if t.task not in kinds:
            raise KeyError(f"task {t.task!r} is not among the pool's {len(kinds)} tasks")
        row = out.setdefault(kinds[t.task], [0, 0, 0])
        solved = bool(t.verifier.get("strict"))
        row[0] += 1
        row[1] += solved
        row[2] += solved and bool(t.verifier.get("flags"))
    return {k: tuple(v) for k, v in sorted(out.items(), key=lambda kv: (-kv[1][0], kv[0]))}


def step_files(stage: Path, steps: tuple[int, int] | None = None, joint_only: bool = False) -> list[Path]:
    """The stage's step trajectories, oldest first (a running stage's last step from its rollouts), within `steps`
    (both ends included) and, with `joint_only`, of its joint steps alone (the phase in `step-K/rollout.json`:
    the warm-up's and calibration's episodes train the critic only)."""
    files = []
    for d in sorted(Path(stage).glob("step-*")):
        m = re.fullmatch(r"step-(\d+)", d.name)
        f = d / "trajectories.jsonl" if (d / "trajectories.jsonl").is_file() else d / "rollouts.jsonl"
        if not m or not f.is_file() or (steps and not steps[0] <= int(m.group(1)) <= steps[1]):
            continue
        if joint_only and StageDir(d).read("rollout.json", {}).get("phase") != "joint":
            continue
        files.append(f)
    return files


def _range(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+):(\d+)", text)
    if not m or int(m.group(1)) > int(m.group(2)):
        raise argparse.ArgumentTypeError(f"{text!r}: expected A:B, two step numbers with A <= B")
    return int(m.group(1)), int(m.group(2))


def main(argv=None) -> None:
    from ..rpr.batches import kind_map
    from ..tasks import find_tasks

    ap = argparse.ArgumentParser(prog="python -m rsi_lite.report.drawn", description=__doc__.splitlines()[0])
    ap.add_argument("stage", type=Path, help="an RPR stage directory (runs/NAME/rpr-N)")
    ap.add_argument("--pool", type=Path, help="its pool (default: the stage config's `pool`, else ../pool)")
    ap.add_argument("--steps", type=_range, help="A:B, the steps to count (both included; default all)")
    ap.add_argument("--all-phases", action="store_true", help="also the warm-up's and calibration's steps")
    a = ap.parse_args(argv)
    cfg = StageDir(a.stage).read("config.json", None) or {}
    pool = a.pool or (Path(cfg["pool"]) if cfg.get("pool") else a.stage.parent / "pool")
    if not pool.is_dir():
        raise SystemExit(f"{pool}: no such pool directory (pass --pool)")
    files = step_files(a.stage, a.steps, joint_only=not a.all_phases)
    if not files:
        raise SystemExit(f"{a.stage}: no {'' if a.all_phases else 'joint '}step trajectories"
                         + (" in steps {}:{}".format(*a.steps) if a.steps else ""))
    try:
        rows = drawn([t for f in files for t in read_trajectories(f)], kind_map(find_tasks(pool)))
    except KeyError as e:
        raise SystemExit(f"{a.stage}: {e.args[0]} ({pool}); pass the stage's pool with --pool") from None
    print(f"{a.stage}: {len(files)} {'' if a.all_phases else 'joint '}steps, {sum(r[0] for r in rows.values())} episodes")
    print(f"{'episodes':>8} {'solved':>6} {'flagged':>7}  kind")
    for k, (n, s, f) in rows.items():
        print(f"{n:8d} {s:6d} {f:7d}  {k}")


if __name__ == "__main__":
    main()
