"""Evaluation: Mean@k success per suite, strict completions, process reward, breakdowns.

Mean@k runs every task k times with different seeds; a run's success is the fraction of
tasks with S = 1, and Mean@k is the mean of the k runs' successes (the paper's "mean of
three runs"). Process reward is the mean of passed / total checks over all episodes (the
LHTB measure). Results go to `DIR/results.json` (atomically), the episodes to
`DIR/trajectories.jsonl`, and a plotly figure to `DIR/results.html`.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from pathlib import Path

from ..records import write_json_atomic
from ..rollout.engine import RolloutConfig, run_episodes
from ..rollout.trajectory import Trajectory, write_trajectories
from ..tasks import Task, find_tasks


def resolve_suite(name_or_dir: str, root: Path, errors: list | None = None) -> tuple[str, list[Task]]:
    """A suite name (a folder of tasks_mini/) or any directory of Harbor-layout tasks. With `errors`, tasks that
    fail to load are collected there (`find_tasks`) instead of stopping the others."""
    path = Path(name_or_dir)
    if not path.is_dir():
        path = root / name_or_dir
    if not path.is_dir():
        raise FileNotFoundError(f"suite {name_or_dir!r}: neither a directory nor a suite in {root}")
    tasks = find_tasks(path, errors)
    if not tasks and not errors:
        raise FileNotFoundError(f"{path}: no tasks (no instruction.md below it)")
    return path.name, tasks


def summarize(trajs: list[Trajectory], k: int | dict) -> dict:
    """Per-suite figures from finished episodes (pure: no model, no sandbox); `k` as `evaluate` takes it."""
    by_suite: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajs:
        by_suite[t.suite or "tasks"].append(t)
    out = {}
    for suite, ts in by_suite.items():
        runs = defaultdict(list)
        for t in ts:
            runs[t.seed].append(t.verifier["strict"])
        per_run = [sum(v) / len(v) for _, v in sorted(runs.items())]
        robust = defaultdict(list)  # strict and not flagged (`verify.shadow.flag_successes`): it passes its twin too
        for t in ts:
            robust[t.seed].append(int(bool(t.verifier["strict"]) and not t.verifier.get("flags")))
        process = [t.verifier["passed"] / t.verifier["total"] if t.verifier["total"] else 0.0 for t in ts]
        out[suite] = {
            "success": statistics.mean(per_run), "k": len(per_run), "runs": per_run,
            "n_tasks": len({t.task for t in ts}), "strict": sum(t.verifier["strict"] for t in ts),
            "episodes": len(ts), "process_reward": statistics.mean(process),
            "by_family": _breakdown(ts, "family"), "by_difficulty": _breakdown(ts, "difficulty"),
            "generated_tokens": sum(t.tokens["generated"] for t in ts),
        }
        if all("flags" in t.verifier for t in ts if t.verifier["strict"]):  # the successes were replayed
            out[suite].update({
                "robust_success": statistics.mean(sum(v) / len(v) for _, v in sorted(robust.items())),
                "robust_strict": sum(sum(v) for v in robust.values()),
                "flagged": dict(Counter(f for t in ts for f in t.verifier.get("flags") or []))})
        if len(per_run) != suite_k(k, suite):
            out[suite]["note"] = f"{len(per_run)} runs found, {suite_k(k, suite)} asked for"
    return out


def _breakdown(ts: list[Trajectory], key: str) -> dict:
    groups = defaultdict(list)
    for t in ts:
        groups[getattr(t, key)].append(t.verifier["strict"])
    return {g: {"success": sum(v) / len(v), "episodes": len(v)} for g, v in sorted(groups.items())}


def table(results: dict) -> str:
    """One row per suite; each suite's runs per task (`k`) are read from its results."""
    lines = [f"{'suite':10} {'tasks':>5} {'k':>2} {'Mean@k':>9} {'strict':>8} {'process':>8} {'robust':>8}"]
    for suite, r in results.items():
        robust = f"{100 * r['robust_success']:7.2f}%" if "robust_success" in r else f"{'':8}"
        lines.append(f"{suite:10} {r['n_tasks']:5} {r['k']:2} {100 * r['success']:8.2f}% {r['strict']:4}/{r['episodes']:<3} "
                     f"{r['process_reward']:8.3f} {robust}")
    return "\n".join(lines)


def figure(results: dict, title: str):
    import plotly.graph_objects as go

    suites = list(results)
    fig = go.Figure([go.Bar(x=suites, y=[100 * results[s]["success"] for s in suites], name="Mean@k success %"),
                     go.Bar(x=suites, y=[100 * results[s]["process_reward"] for s in suites], name="process reward %")])
    fig.update_layout(title=title, barmode="group", yaxis_title="%")
    return fig


def subset(tasks: list[Task], limit: int | None, spread: bool = False) -> list[Task]:
    """The first `limit` tasks, or with `spread` `limit` tasks evenly spaced through the suite, so that a
    small evaluation samples every family instead of the first one (suites are ordered by family)."""
    if not limit or limit >= len(tasks):
        return tasks
    if not spread:
        return tasks[:limit]
    return [tasks[i * len(tasks) // limit] for i in range(limit)]


def suite_limit(limit: int | dict | None, suite: str) -> int | None:
    """`limit` for one suite: an int applies to every suite; a dict names suites (`"*"`: every other one; a
    missing key or None: all of the suite's tasks).

    >>> suite_limit({"core": 15, "*": 2}, "core"), suite_limit({"core": 15, "*": 2}, "hard"), suite_limit(3, "val")
    (15, 2, 3)
    """
    if isinstance(limit, dict):
        return limit.get(suite, limit.get("*"))
    return limit


def suite_k(k: int | dict, suite: str) -> int:
    """Runs per task for one suite: an int applies to every suite; a dict names suites (`"*"`: every other one).

    >>> suite_k({"core": 3, "*": 1}, "core"), suite_k({"core": 3, "*": 1}, "val"), suite_k(3, "val")
    (3, 1, 3)
    """
    n = suite_limit(k, suite)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"k={k!r}: suite {suite!r} needs a whole number of runs >= 1 (name it, or give \"*\")")
    return n


def picked_tasks(suites: list[str], limit: int | dict | None, spread: bool,
                 tasks_root: Path | None = None) -> dict[str, tuple[str, list[Task]]]:
    """{suite as given: (its name, the tasks an evaluation runs)}: `evaluate` and `floor` pick the same ones."""
    from ..paths import TASKS_ROOT

    out = {}
    for s in suites:
        name, tasks = resolve_suite(s, tasks_root or TASKS_ROOT)
        out[s] = (name, subset(tasks, suite_limit(limit, s), spread))
    return out


def evaluate(policy, suites: list[str], out: Path, *, k: int | dict = 3, rollout: RolloutConfig | None = None,
             checkpoint: str = "base", limit: int | dict | None = None, spread: bool = False,
             tasks_root: Path | None = None, progress: bool = False, shadow: bool = True) -> dict:
    """Mean@k per suite (`k` runs per task: an int for every suite, or a dict per suite with `"*"` for the others,
    as `limit`); with `shadow`, also robust success: the successes that pass their shadow twin too and
    trip no pattern check (`verify.shadow.flag_successes`)."""

    import time

    from ..timing import CLOCK

    rollout = rollout or RolloutConfig()
    clock, t0 = CLOCK.raw(), time.perf_counter()
    jobs = [(t, seed) for s, (_, tasks) in picked_tasks(suites, limit, spread, tasks_root).items()
            for seed in range(suite_k(k, s)) for t in tasks]
    trajs = run_episodes(policy, jobs, rollout, policy_name=checkpoint, progress=progress)
    if shadow:
        from ..verify.shadow import flag_successes

        flag_successes(trajs, backend=rollout.backend, workers=rollout.workers)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_trajectories(trajs, out / "trajectories.jsonl")
    results = summarize(trajs, k)
    wall = time.perf_counter() - t0
    doc = {"checkpoint": checkpoint, "harness": rollout.harness, "k": k, "limit": limit, "spread": spread,
           "rollout": rollout.to_dict(), "suites": results, "wall_s": round(wall, 1),
           "breakdown": CLOCK.snapshot(wall, since=clock)}
    write_json_atomic(out / "results.json", doc)
    figure(results, f"{checkpoint} under the {rollout.harness} harness").write_html(out / "results.html",
                                                                                       include_plotlyjs="cdn")
    return doc


def floor(suites: list[str], out: Path, *, limit: int | dict | None = None, spread: bool = False,
          backend: str = "auto", workers: int = 8, tasks_root: Path | None = None) -> dict:
    """What doing nothing scores on the tasks `evaluate` runs with the same `limit` and `spread`: each task's
    verifier on its untouched workspace, once (no command, so nothing varies from run to run). Success should
    read 0 everywhere (a task that passes untouched is broken: `rsi-lite tasks check` says so); the process
    reward is the partial credit any policy gets for free, the floor of that column (on `lhtb`, 1 of 11
    checks). Written to `DIR/floor.json` (atomically)."""
    from concurrent.futures import ThreadPoolExecutor

    from ..verify.verifier import attempt

    picked = dict(picked_tasks(suites, limit, spread, tasks_root).values())
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        reports = {name: list(pool.map(lambda t: attempt(t, [], backend=backend)[1], tasks))
                   for name, tasks in picked.items()}
    doc = {"what": "each task's verifier on its untouched workspace (no command)", "limit": limit,
           "spread": spread, "suites": {}}
    for name, rs in reports.items():
        doc["suites"][name] = {
            "n_tasks": len(rs), "strict": sum(bool(r.strict) for r in rs),
            "success": statistics.mean(bool(r.strict) for r in rs),
            "process_reward": statistics.mean(r.passed / r.total if r.total else 0.0 for r in rs),
            "tasks": {t.name: [r.passed, r.total] for t, r in zip(picked[name], rs)}}
    Path(out).mkdir(parents=True, exist_ok=True)
    write_json_atomic(Path(out) / "floor.json", doc)
    return doc


def compare(docs: dict[str, dict], suites: list[str] | None = None) -> str:
    """A stage-by-suite table of Mean@k success (%) from several `results.json` documents, e.g.
    `compare({"Base": json.load(...), "RSR-1": json.load(...)})`; a missing suite shows as '-'."""
    suites = suites or list(dict.fromkeys(s for d in docs.values() for s in d["suites"]))
    ks = {c["k"] for d in docs.values() for c in d["suites"].values()}
    head = f"{'stage':12}" + "".join(f"{s:>9}" for s in suites) + f"   (Mean@{'/'.join(map(str, sorted(ks)))}, success %)"
    rows = [head]
    for name, d in docs.items():
        cells = [f"{100 * d['suites'][s]['success']:9.2f}" if s in d["suites"] else f"{'-':>9}" for s in suites]
        rows.append(f"{name:12}" + "".join(cells))
    return "\n".join(rows)
