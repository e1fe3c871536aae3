"""The report's held-out kinds: each RPR phase's incoming checkpoint and its actor on fresh instances of the kinds
its first probe found learnable (`loop.Loop.heldout`). Where the whole suites leave PPO little room (at 135M most
of `core` is kinds no rollout ever solves), this is where a refinement that learns shows it."""

from __future__ import annotations

import json
from pathlib import Path

STAGE_NAMES = ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]


def _read(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def heldout_rows(d: Path) -> dict:
    """Per RPR phase (`loop.Loop.heldout`): its incoming checkpoint and its actor on held-out instances of the
    kinds its first probe found learnable: Mean@k with the runs, and each kind's successes / episodes."""
    from .trajectory import read_trajectories

    out, names = {}, {x.lower(): x for x in STAGE_NAMES}
    for cyc in (1, 2):
        h = d / f"heldout-rpr-{cyc}"
        meta = _read(h / "kinds.json")
        if not meta or not meta["tasks"]:
            continue
        rows = []
        for e in sorted(h.glob("eval-*/DONE")):
            doc = json.loads((e.parent / "results.json").read_text())
            by_kind: dict[str, list[int]] = {}
            for t in read_trajectories(e.parent / "trajectories.jsonl"):
                got = by_kind.setdefault(meta["tasks"].get(t.task, "?"), [0, 0])
                got[0], got[1] = got[0] + int(bool(t.verifier.get("strict"))), got[1] + 1
            r = next(iter(doc["suites"].values()))
            rows.append({"stage": names[e.parent.name.removeprefix("eval-")], "checkpoint": doc["checkpoint"],
                         "success": r["success"], "runs": r["runs"], "strict": r["strict"], "episodes": r["episodes"],
                         "by_kind": dict(sorted(by_kind.items()))})
        rows.sort(key=lambda r: r["stage"] == f"RPR-{cyc}")  # the incoming checkpoint first
        out[f"RPR-{cyc}"] = {"tasks": len(meta["tasks"]), "per_kind": meta["per_kind"], "rows": rows}
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
    return out + [""]


def heldout_claims(rep: dict, verdict) -> list[dict]:
    """One claim per RPR phase measured on held-out kinds: its gain over its incoming checkpoint, judged by
    `verdict(gain, spread)` (the report's rule: a gain inside the run-to-run spread is no gain)."""
    out = []
    for seed, phases in rep.get("heldout", {}).items():
        for phase, h in phases.items():
            if len(h["rows"]) != 2:
                continue
            a, b = h["rows"]
            g = (100 * (b["success"] - a["success"]),
                 100 * max(max(r["runs"]) - min(r["runs"]) for r in (a, b)))
            out.append({"claim": f"PPO learns where it has something to learn ({phase} over {a['stage']} on "
                                 f"{h['tasks']} held-out instances of the kinds its first probe found learnable"
                                 + (f", seed {seed}" if len(rep["heldout"]) > 1 else "") + ")",
                        "verdict": verdict(g), "figures": f"{100 * a['success']:.1f} -> {100 * b['success']:.1f}: "
                                                           f"{g[0]:+.1f} points (spread {g[1]:.1f})"})
    return out
