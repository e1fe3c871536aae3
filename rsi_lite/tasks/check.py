"""`rsi-lite tasks check`: a task is good when its reference solution passes every check
and an agent that does nothing fails.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..sandbox import SandboxLimits, make_sandbox
from ..verify import VerifierReport, verify_sandbox
from .task import Task


@dataclass
class TaskCheck:
    task: str
    ok: bool
    reason: str
    solution: VerifierReport | None
    noop: VerifierReport | None
    seconds: float


def _solve_and_verify(task: Task, backend: str, limits: SandboxLimits) -> VerifierReport:
    with make_sandbox(task, backend=backend, limits=limits) as sb:
        # Harbor mounts the solution at /solution for the oracle; /tmp is writable in every backend
        sb.upload(task.solution_dir, "/tmp/solution")
        sb.exec("bash /tmp/solution/solve.sh", timeout=task.agent_timeout_sec)
        return verify_sandbox(sb, task, limits=limits)


def _noop_and_verify(task: Task, backend: str, limits: SandboxLimits) -> VerifierReport:
    with make_sandbox(task, backend=backend, limits=limits) as sb:
        return verify_sandbox(sb, task, limits=limits)


def check_task(task: Task, backend: str = "auto", limits: SandboxLimits | None = None) -> TaskCheck:
    limits = limits or SandboxLimits()
    t0 = time.monotonic()
    sol = noop = None
    try:
        if not (task.solution_dir / "solve.sh").is_file():
            return TaskCheck(task.name, False, "no solution/solve.sh", None, None, 0.0)
        sol = _solve_and_verify(task, backend, limits)
        noop = _noop_and_verify(task, backend, limits)
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
