"""`rsi-lite tasks check`: a task is good when its reference solution passes every check
and an agent that does nothing fails.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..sandbox import SandboxLimits
from ..verify import VerifierReport, attempt, solve_with_reference
from .task import Task


@dataclass
class TaskCheck:
    task: str
    ok: bool
    reason: str
    solution: VerifierReport | None
    noop: VerifierReport | None
    seconds: float




def check_task(task: Task, backend: str = "auto", limits: SandboxLimits | None = None) -> TaskCheck:
    limits = limits or SandboxLimits()
    t0 = time.monotonic()
    sol = noop = None
    try:
        if not (task.solution_dir / "solve.sh").is_file():
            return TaskCheck(task.name, False, "no solution/solve.sh", None, None, 0.0)
        sol = solve_with_reference(task, backend=backend, limits=limits)[1]
        noop = attempt(task, [], backend=backend, limits=limits)[1]
    except Exception as e:  # a task that crashes the harness is a bad task, not a crash of the check
        return TaskCheck(task.name, False, f"{type(e).__name__}: {e}", sol, noop, time.monotonic() - t0)
    problems = []
    if not (sol.strict and sol.valid and sol.passed == sol.total):
        failing = [t["name"] for t in sol.tests if t["status"] != "passed"]
        problems.append(f"solution: S={sol.strict} {sol.passed}/{sol.total} {sol.reason} {failing[:3]}".strip())
    if noop.strict:
        problems.append(f"no-op agent passes ({noop.passed}/{noop.total})")
    return TaskCheck(task.name, not problems, "; ".join(problems), sol, noop, time.monotonic() - t0)


def check_tasks(tasks: list[Task], backend: str = "auto", workers: int = 2, progress=None) -> list[TaskCheck]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = []
        for r in pool.map(lambda t: check_task(t, backend), tasks):
            results.append(r)
            if progress:
                progress(r)
    return results
