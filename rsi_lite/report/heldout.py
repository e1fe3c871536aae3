"""The report's held-out kinds: each RPR phase's incoming checkpoint and its actor on fresh instances of the kinds
its first probe found learnable (`loop.Loop.heldout`). Where the whole suites leave PPO little room (at 135M most
of `core` is kinds no rollout ever solves), this is where a refinement that learns shows it."""

from __future__ import annotations

from pathlib import Path

from ..eval.turns import turn_health, turns_markdown
from ..loop.phases import STAGES, eval_dir
from ..rundir import StageDir


def heldout_rows(d: Path) -> dict:
    """Per RPR phase (`loop.Loop.heldout`): its incoming checkpoint and its actor on held-out instances of the
    kinds its first probe found learnable: Mean@k with the runs, and each kind's and each task's successes /
    episodes (the tasks pair the two rows for `report.claims.heldout_claims`' interval)."""
    from ..rollout.trajectory import read_trajectories

    out, names = {}, {x.lower(): x for x in STAGES}
    for cyc in (1, 2):
        h = d / f"heldout-rpr-{cyc}"
        meta = StageDir(h).read("kinds.json", None)
        if not meta or not meta["tasks"]:
            continue
        rows = []
        for e in StageDir(h).finished("eval"):
            doc = e.read("results.json")
            by_kind: dict[str, list[int]] = {}
            by_task: dict[str, list[int]] = {}
            trajs = read_trajectories(e / "trajectories.jsonl")
            for t in trajs:
                won = int(bool(t.verifier.get("strict")))
                for got in (by_kind.setdefault(meta["tasks"].get(t.task, "?"), [0, 0]), by_task.setdefault(t.task, [0, 0])):
                    got[0], got[1] = got[0] + won, got[1] + 1
            r = next(iter(doc["suites"].values()))
            rows.append({"stage": names[e.path.name.removeprefix("eval-")], "checkpoint": doc["checkpoint"],
                         "success": r["success"], "runs": r["runs"], "strict": r["strict"], "episodes": r["episodes"],
                         "by_kind": dict(sorted(by_kind.items())), "by_task": dict(sorted(by_task.items())),
                         "turns": turn_health(trajs)})
        rows.sort(key=lambda r: r["stage"] == f"RPR-{cyc}")  # the incoming checkpoint first
        out[f"RPR-{cyc}"] = {"tasks": len(meta["tasks"]), "per_kind": meta["per_kind"], "rows": rows,
                             "task_kinds": meta["tasks"]}
    return out


def heldout_markdown(phase: str, h: dict, seed=None) -> list[str]:
    """The table of one RPR phase's held-out kinds: each checkpoint's Mean@k, its runs, and each kind's counts."""
    kinds = sorted({k for r in h["rows"] for k in r["by_kind"]})
    out = [f"## {phase} on held-out kinds" + (f" (seed {seed})" if seed is not None else ""), "",
           f"{h['per_kind']} fresh instances of each kind {phase}'s first probe found learnable (solved sometimes, "
           "not always: what its batches trained on), seeds no pool uses; success %, Mean@k, and per kind the "
           "successes / episodes.", "",
           "| checkpoint | held-out kinds | runs | " + " | ".join(k.replace("|", "/") for k in kinds) + " |",
           "|---|---:|---|" + "---:|" * len(kinds)]
    for r in h["rows"]:
        cells = [f"{r['by_kind'][k][0]}/{r['by_kind'][k][1]}" if k in r["by_kind"] else "-" for k in kinds]
        out.append(f"| {r['stage']} | {100 * r['success']:.2f} ({r['strict']}/{r['episodes']}) | "
                   + ", ".join(f"{100 * x:.1f}" for x in r["runs"]) + " | " + " | ".join(cells) + " |")
    turns = {r["stage"]: r["turns"] for r in h["rows"] if r.get("turns")}
    return out + [""] + turns_markdown(f"{phase} on held-out kinds, turn by turn"
                                       + (f" (seed {seed})" if seed is not None else ""), turns)


def refinement_room(run: Path, d: Path, selection: dict, suites=("core", "val")) -> dict:
    """Per RPR phase: how much of its incoming checkpoint's evaluation PPO could change at all. PPO has no
    gradient toward a kind it never samples a success of, so the failures it can fix are those on kinds some
    rollout of the phase (a step's or a probe's) solved; the rest is room only a self-rewrite opens. Per suite:
    episodes, failures, failures on such kinds, and the points they are worth (the most the phase can add); and,
    once the phase's own evaluation is done, `paired`: its change over the incoming checkpoint on the suite's tasks
    with a 95% interval (`eval.paired.paired_bootstrap`: tasks resampled, each with its two success rates)."""
    from ..eval.paired import paired_bootstrap, task_rates
    from ..paths import TASKS_ROOT
    from ..rollout.trajectory import read_trajectories
    from ..tasks import find_tasks
    from ..tasks.spec import task_kind

    read: dict[Path, dict[str, str]] = {}

    def kinds_of(root: Path) -> dict[str, str]:  # each task's kind; a directory is read once for both cycles
        if root not in read:
            read[root] = {t.name: task_kind(t.family, t.difficulty, t.instruction) for t in find_tasks(root)}
        return read[root]

    out = {}
    for cyc in (1, 2):
        stage, incoming = d / f"rpr-{cyc}", selection.get(f"RSR-{cyc}", {}).get("retained")
        files = StageDir(stage).trajectory_files() + StageDir(stage).trajectory_files("probe")
        cfg = StageDir(stage).read("config.json", None)
        e = eval_dir(d, incoming, run / "eval-base") if incoming else None
        if not files or not cfg or e is None or not StageDir(e).done:
            continue
        pool = kinds_of(Path(cfg.get("pool") or run / "pool"))
        solved = {pool[t.task] for f in files for t in read_trajectories(f) if t.verifier.get("strict") and t.task in pool}
        row = {"incoming": incoming, "kinds_solved_by_ppo": len(solved)}
        evals = read_trajectories(e / "trajectories.jsonl")
        mine = eval_dir(d, f"RPR-{cyc}")
        after = read_trajectories(mine / "trajectories.jsonl") if StageDir(mine).done else []
        for s in suites:
            ts = [t for t in evals if t.suite == s]
            if not ts:
                continue
            kinds = kinds_of(TASKS_ROOT / s)
            fails = [t for t in ts if not t.verifier.get("strict")]
            fixable = sum(kinds.get(t.task) in solved for t in fails)
            row[s] = {"episodes": len(ts), "failures": len(fails), "on_kinds_ppo_solved": fixable,
                      "at_most_points": 100 * fixable / len(ts)}
            pairs = [task_rates([t for t in group if t.suite == s], {}) for group in (evals, after)]
            both = sorted(set(pairs[0]) & set(pairs[1]))
            if both:
                row[s]["paired"] = paired_bootstrap([pairs[0][n][1] for n in both], [pairs[1][n][1] for n in both])
        out[f"RPR-{cyc}"] = row
    return out
