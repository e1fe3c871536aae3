"""Sandbox and verifier latency: `python -m rsi_lite.bench.sandbox [--backend B] [--tasks N]`.

Prints the median and 90th-percentile latency of one shell command in a running sandbox,
the sandbox start time, and the verifier time per task (fresh sandbox, copy in, pytest,
read the reports), over the first N tasks of each suite. A benchmark, not a test: run it
by hand and quote its output.
"""

from __future__ import annotations

import argparse
import statistics
import time

from ..sandbox import make_sandbox, resolve_backend
from ..tasks import find_tasks
from ..verify.verifier import verify_sandbox


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main(argv: list[str] | None = None) -> None:
    from ..paths import TASKS_ROOT

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--tasks", type=int, default=5, help="tasks per suite for the verifier timing")
    ap.add_argument("--commands", type=int, default=200)
    a = ap.parse_args(argv)
    backend = resolve_backend(a.backend)
    tasks = []
    for suite in sorted(p for p in TASKS_ROOT.iterdir() if p.is_dir()):
        tasks += find_tasks(suite)[: a.tasks]

    starts, cmds = [], []
    t0 = time.perf_counter()
    sb = make_sandbox(tasks[0], backend=backend)
    sb.start()
    starts.append(time.perf_counter() - t0)
    for i in range(a.commands):
        t = time.perf_counter()
        sb.exec(["true", "ls /app", "echo hi > x.txt", "cat x.txt", "wc -l x.txt"][i % 5])
        cmds.append(time.perf_counter() - t)
    sb.close()

    verify = []
    for task in tasks:
        t = time.perf_counter()
        with make_sandbox(task, backend=backend) as s:
            starts.append(time.perf_counter() - t)
            t = time.perf_counter()
            verify_sandbox(s, task)
            verify.append(time.perf_counter() - t)

    print(f"backend: {backend}")
    print(f"sandbox start: median {1000 * statistics.median(starts):.1f} ms over {len(starts)} starts")
    print(f"command latency: median {1000 * statistics.median(cmds):.2f} ms, p90 {1000 * _pct(cmds, 0.9):.2f} ms "
          f"over {len(cmds)} commands")
    print(f"verifier time per task: median {statistics.median(verify):.2f} s, p90 {_pct(verify, 0.9):.2f} s "
          f"over {len(verify)} tasks")


if __name__ == "__main__":
    main()
