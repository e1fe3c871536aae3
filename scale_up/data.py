"""Tasks as verl's training rows: one parquet row per (task, sample), read by verl's `RLHFDataset` and handed to
the agent loop `rsi_terminal` (scale_up/agent_loop.py), which opens the task from `extra_info.task_path`.

    python -m scale_up.data RUN/tasks/train.parquet tasks_pool/ [--samples 1]
    python -m scale_up.data RUN/tasks/val.parquet tasks_mini/val --samples 3      # Mean@3 as verl validation

The row's `prompt` is the task's instruction as a user message: verl's dataset wants one, but the episode's
real prompt is the harness's (system prompt, instruction, guidance), built by the agent loop with the kit's
`TokenStream`. `extra_info.sample` numbers the repeated rows of one task, so each gets its own episode seed.
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


def task_rows(root: str | Path, samples: int = 1, harnesses: list[str] | None = None) -> list[dict]:
    """Rows of every task under `root` (a task directory or a folder of them), `samples` rows each, under each of
    `harnesses` (None: the config's)."""
    root = Path(root)
    tasks = [load_task(root)] if (root / "task.toml").is_file() else find_tasks(root)
    if not tasks:
        raise FileNotFoundError(f"{root}: no task (a directory with task.toml, or a folder of them)")
    rows = [task_row(t, sample=s, harness=h) for t in tasks for h in (harnesses or [None]) for s in range(samples)]
    for i, r in enumerate(rows):
        r["extra_info"]["index"] = i
    return rows


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
