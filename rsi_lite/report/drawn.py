"""What an RPR stage's batches drew: episodes and verified successes per task kind, over a range of its steps.
Forgetting and learning are read against it (a kind that fell without being drawn, one drawn at 28% success).

    python -m rsi_lite.report.drawn runs/s8-kinds/rpr-1            # every step; the pool beside the stage
    python -m rsi_lite.report.drawn runs/s8-kinds/rpr-1 --steps 0:8 --pool runs/s8-kinds/pool
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..rollout.trajectory import Trajectory, read_trajectories
from ..rundir import StageDir


def drawn(trajs: list[Trajectory], kinds: dict[str, str]) -> dict[str, tuple[int, int]]:
    """kind -> (episodes, strict successes) of `trajs`, most drawn first; `kinds` maps a task's name to its kind (a
    task it does not name is an error, so a wrong pool is not silently counted as nothing)."""
    out: dict[str, list[int]] = {}
    for t in trajs:
        if t.task not in kinds:
            raise KeyError(f"task {t.task!r} is not in the pool's tasks ({len(kinds)} read); pass the stage's --pool")
        row = out.setdefault(kinds[t.task], [0, 0])
        row[0] += 1
        row[1] += int(bool(t.verifier.get("strict")))
    return {k: (n, s) for k, (n, s) in sorted(out.items(), key=lambda kv: (-kv[1][0], kv[0]))}


def step_files(stage: Path, steps: tuple[int, int] | None) -> list[Path]:
    """The stage's step trajectories (a running stage's last step from its rollouts), within `steps` (both ends
    included)."""
    files = []
    for d in sorted(Path(stage).glob("step-*")):
        k = int(d.name.split("-")[1])
        f = d / "trajectories.jsonl" if (d / "trajectories.jsonl").is_file() else d / "rollouts.jsonl"
        if f.is_file() and (steps is None or steps[0] <= k <= steps[1]):
            files.append(f)
    return files


def main(argv=None) -> None:
    from ..tasks import find_tasks
    from ..tasks.spec import task_kind

    ap = argparse.ArgumentParser(prog="python -m rsi_lite.report.drawn", description=__doc__.splitlines()[0])
    ap.add_argument("stage", type=Path, help="an RPR stage directory (runs/NAME/rpr-N)")
    ap.add_argument("--pool", type=Path, help="its pool (default: the stage config's `pool`, else ../pool)")
    ap.add_argument("--steps", help="A:B, the steps to count (both included; default all)")
    a = ap.parse_args(argv)
    cfg = StageDir(a.stage).read("config.json", None) or {}
    pool = a.pool or (Path(cfg["pool"]) if cfg.get("pool") else a.stage.parent / "pool")
    if not pool.is_dir():
        raise SystemExit(f"{pool}: no such pool directory (pass --pool)")
    steps = tuple(int(x) for x in a.steps.split(":")) if a.steps else None
    files = step_files(a.stage, steps)
    if not files:
        raise SystemExit(f"{a.stage}: no step trajectories{f' in steps {a.steps}' if steps else ''}")
    kinds = {t.name: task_kind(t.family, t.difficulty, t.instruction) for t in find_tasks(pool)}
    rows = drawn([t for f in files for t in read_trajectories(f)], kinds)
    print(f"{a.stage}: {len(files)} steps, {sum(n for n, _ in rows.values())} episodes")
    print(f"{'episodes':>8} {'solved':>6}  kind")
    for k, (n, s) in rows.items():
        print(f"{n:8d} {s:6d}  {k}")


if __name__ == "__main__":
    main()
