"""`rsi-lite tasks check`: a task is good when its reference solution passes every check
and an agent that does nothing fails; and, for a generated task, when its shadow twin (same
instruction, other hidden data) is passed by the twin's reference solution and failed by the
original's output copied in (`verify.shadow`).
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..sandbox import SandboxLimits
from ..tasks.task import Task, ignored_features
from .verifier import NO_CTRF, VerifierReport, attempt, solve_with_reference


@dataclass
class TaskCheck:
    task: str
    ok: bool
    reason: str
    solution: VerifierReport | None
    noop: VerifierReport | None
    seconds: float
    notes: list[str] = field(default_factory=list)
    """Lines worth knowing about a task that passed or failed: e.g. a reward file without a CTRF report."""
    shadow: object = None
    """The shadow twin's check (`verify.shadow.ShadowCheck`) for a generated task; None otherwise."""

    def summary(self) -> str:
        def part(r):
            return f"{r.passed}/{r.total}" if r.valid or r.total != 1 else ("pass" if r.strict else "fail")
        out = f"solution {part(self.solution)}, no-op {part(self.noop)}"
        if self.shadow is not None:
            h = self.shadow.hardcoded
            out += (f", twin: copied output {h.passed}/{h.total}" if h is not None
                    else ", twin: the answer depends on no hidden data")
        return out


def _tail(report: VerifierReport, lines: int = 3) -> str:
    """What the verifier printed, on one line: its error lines if any (an import error, `uvx: command not
    found`), else its last lines; what a report without tests cannot say."""
    out = [x.strip() for x in (report.output_tail or "").splitlines() if x.strip() and not set(x.strip()) <= set("=!-_ ")]
    errors = [x for x in out if re.search(r"Error\b|error:|not found|No such file|cannot|denied", x)]
    pick = list(dict.fromkeys(errors))[-lines:] or out[-lines:]
    return " | ".join(pick)[-400:] if pick else "(no output)"



def is_generated(task: Task) -> bool:
    meta = task.config.get("metadata", {})
    return all(k in meta for k in ("suite", "seed", "family", "generator"))


def check_task(task: Task, backend: str = "auto", limits: SandboxLimits | None = None,
               mode: str = "fresh", shadow: bool = True) -> TaskCheck:
    limits = limits or SandboxLimits()
    t0 = time.monotonic()
    sol = noop = None
    try:
        if not (task.solution_dir / "solve.sh").is_file():
            return TaskCheck(task.name, False, "no solution/solve.sh", None, None, 0.0)
        sol = solve_with_reference(task, backend=backend, limits=limits, mode=mode)[1]
        noop = attempt(task, [], backend=backend, limits=limits, mode=mode)[1]
    except Exception as e:  # a task that crashes the harness is a bad task, not a crash of the check
        return TaskCheck(task.name, False, f"{type(e).__name__}: {e}", sol, noop, time.monotonic() - t0)
    problems, notes = [], ignored_features(task) if backend != "docker" else []
    reward_only = sol.reason.startswith(NO_CTRF) and sol.reward_file is not None  # Harbor allows a verifier that writes only reward.txt
    if reward_only:
        notes.append("reward file only (no CTRF report): S from reward.txt; no per-check P, so FDR and SPR "
                     "fall back to S")
    if not (sol.strict and (reward_only or (sol.valid and sol.passed == sol.total))):
        failing = [t["name"] for t in sol.tests if t["status"] != "passed"]
        problem = f"solution: S={sol.strict} {sol.passed}/{sol.total} {sol.reason} {failing[:3]}".strip()
        if not sol.valid or not sol.tests:  # no report, or no test ran (e.g. a test module that does not import)
            problem += f"; verifier output: {_tail(sol)}"
        problems.append(problem)
    if noop.strict:
        problems.append(f"no-op agent passes ({noop.passed}/{noop.total})")
    twin = None
    if shadow and is_generated(task) and not problems:
        from .shadow import check_shadow

        twin = check_shadow(task, backend=backend, limits=limits)
        if not twin.ok:
            problems.append(f"shadow twin: {twin.reason}")
    return TaskCheck(task.name, not problems, "; ".join(problems), sol, noop, time.monotonic() - t0, notes, twin)


def check_tasks(tasks: list[Task], backend: str = "auto", workers: int = 2, progress=None,
                mode: str = "fresh", shadow: bool = True) -> list[TaskCheck]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = []
        for r in pool.map(lambda t: check_task(t, backend, mode=mode, shadow=shadow), tasks):
            results.append(r)
            if progress:
                progress(r)
    return results
