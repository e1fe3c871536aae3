"""Tasks as verl's training rows: one parquet row per (task, sample), read by verl's `RLHFDataset` and handed to
the agent loop `rsi_terminal` (scale_up/agent_loop.py), which opens the task from `extra_info.task_path`.

    python -m scale_up.data RUN/tasks/train.parquet tasks_pool/ [--samples 1]
    python -m scale_up.data RUN/tasks/val.parquet tasks_mini/val --samples 3      # Mean@3 as verl validation

The row's `prompt` is the task's instruction as a user message: verl's dataset wants one, but the episode's
real prompt is the harness's (system prompt, instruction, guidance), built by the agent loop with the kit's
`TokenStream`. `extra_info.sample` numbers the repeated rows of one task, so each gets its own episode seed.

The cycle (`scale_up.cycle`, its `base/tasks` job) writes a run's rows itself with `write_run_tasks`: the kit's
pool split as the kit's RPR splits it (`rpr.batches.warmup_split`), the warm-up part for the critic warm-up and
the rest for PPO, and the `val` suite for verl's validation files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rsi_lite.tasks.task import find_tasks, load_task

AGENT = "rsi_terminal"


def task_row(task, *, sample: int = 0, index: int = 0, harness: str | None = None,
             guidance: str | None = None) -> dict:
    """One row; `harness` (a row of its own harness, self-rewrite's discovery) and `guidance` (a runbook shown
    privately, its re-solves) are read by the agent loop when set."""
    info = {"index": index, "task_path": str(Path(task.path).resolve()), "task": task.name, "family": task.family,
            "difficulty": task.difficulty, "sample": sample, "harness": harness, "guidance": guidance}
    return {"data_source": f"rsi-lite/{task.suite or 'tasks'}", "agent_name": AGENT,
            "prompt": [{"role": "user", "content": task.instruction}], "ability": "terminal",
            "reward_model": {"style": "verifier", "ground_truth": ""}, "extra_info": info}


def rows_of(tasks: list, samples: int = 1, harnesses: list[str] | None = None) -> list[dict]:
    """Rows of `tasks`, `samples` rows each, under each of `harnesses` (None: the config's), numbered in order."""
    rows = [task_row(t, sample=s, harness=h) for t in tasks for h in (harnesses or [None]) for s in range(samples)]
    for i, r in enumerate(rows):
        r["extra_info"]["index"] = i
    return rows


def task_rows(root: str | Path, samples: int = 1, harnesses: list[str] | None = None) -> list[dict]:
    """Rows of every task under `root` (a task directory or a folder of them), as `rows_of`."""
    root = Path(root)
    tasks = [load_task(root)] if (root / "task.toml").is_file() else find_tasks(root)
    if not tasks:
        raise FileNotFoundError(f"{root}: no task (a directory with task.toml, or a folder of them)")
    return rows_of(tasks, samples, harnesses)


def write_run_tasks(run: str | Path, train: str | Path, warmup: str | Path, val: str | Path, rpr, *,
                    pool_size: int, val_suite: str = "val") -> dict:
    """A run's task rows for verl, from the kit's pool in RUN/pool (written first if missing, `pool_size` tasks, as
    the CPU loop does: `tasks.suites.ensure_pool`): the pool tasks the RPR config `rpr` trains on
    (`tasks.suites.pool_tasks`: its difficulty, family and kind filters) split by `rpr.batches.warmup_split` (a
    fixed shuffle by `rpr.seed`, its first `rpr.warmup_tasks` for the critic warm-up) into `warmup` and `train`,
    and the `val_suite` suite into `val` (verl's validation files; the kit selects checkpoints on val by its own
    evaluation). Each file is written to a temp name and renamed, so a killed job leaves none half-written, and
    running it again writes the same rows. Returns each file's path and row count."""
    from dataclasses import replace

    from rsi_lite.eval.evaluate import resolve_suite
    from rsi_lite.paths import TASKS_ROOT
    from rsi_lite.rpr.batches import warmup_split
    from rsi_lite.tasks.suites import ensure_pool, pool_tasks

    if pool_size < 1 or not 0 <= rpr.warmup_tasks < pool_size:
        raise ValueError(f"pool_size {pool_size}, warmup_tasks {rpr.warmup_tasks}: expected a pool of at least one "
                         "task and fewer warm-up tasks than pool tasks")
    rpr = replace(rpr, pool=str(ensure_pool(Path(run), pool_size)))
    pool = pool_tasks(Path(run), rpr)
    if not pool:
        raise FileNotFoundError(f"{rpr.pool}: no pool task passes the RPR config's filters (pool_difficulty "
                                f"{rpr.pool_difficulty}, pool_families {rpr.pool_families})")
    warm, rest = warmup_split(rpr, pool)
    _, val_tasks = resolve_suite(val_suite, TASKS_ROOT)
    return {name: {"path": str(write_parquet(rows_of(tasks), path)), "rows": len(tasks)}
            for name, path, tasks in (("train", train, rest), ("warmup", warmup, warm), ("val", val, val_tasks))}


def write_parquet(rows: list[dict], out: str | Path) -> Path:
    import pandas as pd

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    pd.DataFrame(rows).to_parquet(tmp)
    tmp.replace(out)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m scale_up.data")
    ap.add_argument("out")
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--harness", action="append", help="a row per task under each harness named (repeatable)")
    args = ap.parse_args(argv)
    rows = [r for root in args.roots for r in task_rows(root, args.samples, args.harness)]
    for i, r in enumerate(rows):
        r["extra_info"]["index"] = i
    print(f"{write_parquet(rows, args.out)}: {len(rows)} rows")


if __name__ == "__main__":
    main()
