"""`rsi-lite tasks ...`: list, check, generate, pool, heldout, import and audit tasks (the CLI's task half)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from ..paths import REPO, TASKS_ROOT


def _tasks_for(args_paths: list[str] | None, suite: str | None = None, errors: list | None = None):
    """The tasks named on the command line (or a suite, or all of tasks_mini/). With `errors`, a task that fails
    to load is collected there as (path, TaskError) and the others still load."""
    from ..eval.evaluate import resolve_suite
    from ..tasks import find_tasks

    if args_paths:
        try:  # each a task dir, a suite dir, or a bare suite name
            return [t for p in args_paths for t in resolve_suite(p, TASKS_ROOT, errors)[1]]
        except FileNotFoundError as e:
            sys.exit(f"error: {e}")
    root = TASKS_ROOT / suite if suite else TASKS_ROOT
    if not root.is_dir():
        sys.exit(f"error: {root} does not exist (run `rsi-lite tasks generate`)")
    return find_tasks(root, errors)


def cmd_tasks_list(a) -> int:
    tasks = _tasks_for(None, a.suite)
    for t in tasks:
        print(f"{t.suite:8} {t.family:16} {t.difficulty:8} {t.metadata.get('checks', '?'):>3}  {t.name}")
    by = Counter((t.suite, t.family) for t in tasks)
    print(f"\n{len(tasks)} tasks; per suite: " + ", ".join(f"{s}={n}" for s, n in sorted(Counter(t.suite for t in tasks).items())))
    if a.verbose:
        for (s, f), n in sorted(by.items()):
            print(f"  {s:8} {f:16} {n}")
    return 0


def cmd_tasks_check(a) -> int:
    from ..sandbox import resolve_backend
    from ..verify.check import check_tasks

    errors: list = []
    tasks = _tasks_for(a.paths, a.suite, errors)
    images = Counter(t.environment.base_image for t in tasks if t.environment.base_image and not t.environment.unsupported)
    try:
        backend = resolve_backend(a.backend)
    except Exception as e:  # noqa: BLE001 - said once here; each task's check says it again
        backend = f"none ({e})"
    mode = (f"a fresh {backend} sandbox per check holding a copy of the workspace (not the agent's own sandbox)"
            if a.verifier_mode == "fresh" else f"the agent's own {backend} sandbox after it (Harbor's shared mode)")
    print(f"verifier: {mode}; without network (every sandbox but a Docker one of an allow_internet task), "
          "uv/uvx/pip/apt-get resolve to offline shims (rsi_lite/verify/verifier.py)")
    if images and backend != "docker":
        print("FROM images not used outside Docker (the host's system and Python stand in): "
              + ", ".join(f"{i} ({n})" for i, n in images.most_common(5)))
    for path, e in errors:  # a task that does not load is a failed check, never the end of the run
        print(f"FAIL {path.name:40}   0.0s  does not load: {e}", flush=True)

    def show(r):
        mark = "ok  " if r.ok else "FAIL"
        detail = r.summary() if r.ok else r.reason
        print(f"{mark} {r.task:40} {r.seconds:5.1f}s  {detail}", flush=True)
        for line in r.notes:
            print(f"     {line}", flush=True)

    results = check_tasks(tasks, backend=a.backend, workers=a.workers, progress=show, mode=a.verifier_mode,
                          shadow=not a.no_shadow)
    bad = sum(not r.ok for r in results) + len(errors)
    print(f"{len(results) + len(errors) - bad} passed, {bad} failed")
    return 1 if bad else 0


def cmd_tasks_generate(a) -> int:
    from ..tasks.suites import SUITES, write_suite

    suites = SUITES if a.suite in (None, "all") else [a.suite]
    for s in suites:
        written = write_suite(s, Path(a.out))
        print(f"{s}: {len(written)} tasks -> {Path(a.out) / s}")
    return 0


def cmd_tasks_pool(a) -> int:
    from ..tasks.suites import write_pool

    written = write_pool(Path(a.out), a.n)
    print(f"training pool: {len(written)} tasks -> {a.out} (seeds train/*, eval instances excluded)")
    return 0


def cmd_tasks_heldout(a) -> int:
    from ..rpr.batches import write_heldout

    made = write_heldout(Path(a.stage), Path(a.out), a.per_kind)
    if not made:
        sys.exit(f"error: {a.stage}/probe-000: its first probe found no kind learnable")
    print("\n".join(f"{n:4d}  {k}" for k, n in sorted(Counter(made.values()).items())))
    print(f"{len(made)} fresh tasks -> {a.out}   (then: rsi-lite eval --suite {a.out} ...)")
    return 0


def cmd_tasks_import(a) -> int:
    from ..tasks.tb1_import import import_tb1

    dest, warnings = import_tb1(a.src, a.dest)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"imported {a.src} -> {dest}")
    return 0


def cmd_tasks_audit(a) -> int:
    from ..tasks import find_tasks
    from ..tasks.audit import overlap_audit

    eval_tasks = [t for t in _tasks_for(None) if t.suite != "val" or a.include_val]
    pool_dir = Path(a.pool)
    if not pool_dir.is_dir():
        from ..tasks.suites import write_pool

        write_pool(pool_dir, a.n)
    report = overlap_audit(eval_tasks, find_tasks(pool_dir), n=a.ngram, threshold=a.threshold)
    print(report.summary())
    return 1 if report.leaks else 0


def add_tasks_parser(sub) -> None:
    """The `tasks` subcommands, under the CLI's top-level subparsers."""
    tasks = sub.add_parser("tasks", help="list, check, generate, import and audit tasks").add_subparsers(dest="sub", required=True)
    t = tasks.add_parser("list", help="list the checked-in tasks")
    t.add_argument("--suite")
    t.add_argument("-v", "--verbose", action="store_true", help="also count tasks per suite and family")
    t.set_defaults(fn=cmd_tasks_list)
    t = tasks.add_parser("check", help="run the reference solution and a no-op agent on each task")
    t.add_argument("paths", nargs="*", help="task dirs, suite dirs or suite names (default: every suite)")
    t.add_argument("--suite")
    t.add_argument("--backend", default="auto", choices=["auto", "bwrap", "docker", "local"])
    t.add_argument("--verifier-mode", default="fresh", choices=["fresh", "shared"],
                   help="fresh: a new sandbox with a copy of the workspace (default); shared: Harbor's, the "
                        "tests run in the agent's sandbox after it")
    t.add_argument("--workers", type=int, default=2)
    t.add_argument("--no-shadow", action="store_true",
                   help="skip the shadow twins of generated tasks (same instruction, other hidden data: the twin's "
                        "reference must pass it, the original's output copied in must fail it)")
    t.set_defaults(fn=cmd_tasks_check)
    t = tasks.add_parser("generate", help="(re)write the checked-in suites from their generators")
    t.add_argument("--suite", default="all")
    t.add_argument("--out", default=str(TASKS_ROOT))
    t.set_defaults(fn=cmd_tasks_generate)
    t = tasks.add_parser("pool", help="generate the training pool (seeds disjoint from every suite)")
    t.add_argument("--out", default=str(REPO / "tasks_pool"))
    t.add_argument("-n", type=int, default=360)
    t.set_defaults(fn=cmd_tasks_pool)
    t = tasks.add_parser("heldout", help="fresh instances (seeds no pool uses) of the kinds an RPR stage's first "
                                         "probe found learnable: whether PPO's gain on a kind carries over")
    t.add_argument("--stage", required=True, help="the RPR stage directory (DIR/rpr-N)")
    t.add_argument("--out", required=True, help="where the tasks are written (a directory for `eval --suite`)")
    t.add_argument("--per-kind", type=int, default=10)
    t.set_defaults(fn=cmd_tasks_heldout)
    t = tasks.add_parser("import", help="convert a Terminal-Bench 1 task into the Harbor layout")
    t.add_argument("src")
    t.add_argument("dest")
    t.set_defaults(fn=cmd_tasks_import)
    t = tasks.add_parser("audit", help="n-gram overlap audit: eval suites vs the training pool")
    t.add_argument("--pool", default=str(REPO / "tasks_pool"))
    t.add_argument("-n", type=int, default=360, help="pool size if the pool has to be generated")
    t.add_argument("--ngram", type=int, default=5)
    t.add_argument("--threshold", type=float, default=0.8)
    t.add_argument("--include-val", action="store_true", default=True)
    t.set_defaults(fn=cmd_tasks_audit)
