"""Small derived summaries of a run of the five-phase loop, for the notebooks and the docs to plot without
hours of compute: `docs/results/` (tens of KB, never a run directory).

    python -m rsi_lite.teach.results runs/cpu [--also runs/cpu-seed1] [--out docs/results]
    python -m rsi_lite.teach.results --direct-ppo runs/direct/rpr-1-from-base [--out docs/results]

Reads the run through `rsi_lite.report.write.build` (the report's own reader, so the summaries and
`rsi-lite report` agree) and writes:

    stages.csv             seed, stage, kind (stage | control), retained, suite, success, runs, process_reward
    ppo_curves.csv         seed, stage, step, phase and the report's per-step PPO metrics (`CURVE_KEYS`)
    critic_ev.csv          seed, step, inherited, reset: RPR-2's explained variance before each update with the
                           critic it inherited, and with a fresh one (the `--critic reset` control)
    direct_ppo_probes.csv  seed, before_step, episodes, successes, pool_success, tasks, tasks_solved, tasks_learnable:
                           the pool probes of PPO straight from Base (the `--control direct-ppo` branch); before_step
                           counts the stage's steps, the warm-up (0) and calibration (1) included
    direct_ppo_curves.csv  the same branch's per-step PPO metrics, as ppo_curves.csv's columns
    heldout.csv            seed, phase, stage, kind, successes, episodes: each RPR phase's incoming checkpoint and
                           its actor on fresh instances of the kinds it trained on (`report.heldout`)
    turns.csv              seed, stage, where, turn, actions, unparsed, done, tokens, nll: the actor's replies turn
                           by turn, per PPO step of a stage (where step-K) and on the stage's held-out kinds per
                           checkpoint (where heldout:<checkpoint>); stage is the stage's directory (rpr-1)
    funnel.json            the self-rewrite funnel per seed and cycle
    MANIFEST.json          the command, the commit, the run (its profile, seeds, and the stages and controls it has
                           finished), when, and each file's size

A file whose source is absent from the run (no controls run, say) is not written, and MANIFEST.json says so.
`--direct-ppo STAGE` adds the two direct_ppo_* files from the direct-PPO branch run on its own (`rsi-lite rpr --run
DIR --from base --config configs/rpr-direct-ppo-cpu.json`: the `cpu` profile's branch, without rerunning the five
phases) and records that stage, the command, the commit it was written at and how far the stage had got under
MANIFEST.json's `from_other_runs`. Summaries of a run without that control keep such files and their record.
`docs/results/` holds the kit's latest `cpu` run; `docs/results/forgetting/` the run notebook 05 dissects (`--out`).
The notebooks read them back with `source` (which run, from MANIFEST.json), `stage_runs`, `critic_ev`,
`first_ev` and `heldout_pairs`.
Numbers are copied from the run's files as they are: nothing is rounded, smoothed or filled in.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from ..loop.phases import read_stage_metrics
from ..paths import REPO
from ..records import read_json, write_text_atomic
from ..report.write import CURVE_KEYS, build, read_probes
from ..rundir import StageDir

DIRECT_PPO = "control-direct-ppo"
RESET = "rpr-2-critic-reset"
PROBE_KEYS = ("before_step", "episodes", "pool_success", "tasks", "tasks_solved", "tasks_learnable")


def _csv(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(["" if v is None else v for v in r] for r in rows)
    return buf.getvalue()


def stages_csv(rep: dict) -> str:
    rows = []
    seed = ";".join(map(str, rep["seeds"]))
    for kind, items in (("stage", rep["stages"]), ("control", list(rep["controls"].values()))):
        for r in items:
            retained = r.get("retained")
            for suite, s in r["suites"].items():
                rows.append([seed, r["stage"], kind, "" if retained is None else retained, suite, s["success"],
                             ";".join(str(x) for x in s.get("runs", [])), s.get("process_reward")])
    return _csv(["seeds", "stage", "kind", "retained", "suite", "success", "runs", "process_reward"], rows)


def curves_csv(rep: dict, only: str | None = None) -> str | None:
    """ppo_curves.csv's text: every stage's per-step metrics, or those of the stage directory `only`."""
    rows = []
    for seed, stages in rep["curves"].items():
        for stage, c in stages.items():
            if only is not None and stage != only:
                continue
            for i in range(len(c["step"])):
                rows.append([seed, stage] + [c[k][i] for k in CURVE_KEYS])
    return _csv(["seed", "stage", *CURVE_KEYS], rows) if rows else None


def critic_ev_csv(rep: dict) -> str | None:
    rows = []
    for seed, stages in rep["curves"].items():
        if "rpr-2" not in stages or RESET not in stages:
            continue
        ev = {name: dict(zip(stages[name]["step"], stages[name]["losses/explained_variance_before"]))
              for name in ("rpr-2", RESET)}
        for step in sorted(set(ev["rpr-2"]) | set(ev[RESET])):
            rows.append([seed, step, ev["rpr-2"].get(step), ev[RESET].get(step)])
    return _csv(["seed", "step", "inherited", "reset"], rows) if rows else None


def _probe_rows(seed, probes: list[dict]) -> list[list]:
    rows = []
    for p in probes:
        successes = round(p["pool_success"] * p["episodes"]) if "pool_success" in p and "episodes" in p else None
        rows.append([seed, p.get("before_step"), p.get("episodes"), successes] + [p.get(k) for k in PROBE_KEYS[2:]])
    return rows


PROBES_HEADER = ["seed", "before_step", "episodes", "successes", *PROBE_KEYS[2:]]


def direct_ppo_csv(rep: dict) -> str | None:
    rows = [r for seed, stages in rep["curves"].items()
            for r in _probe_rows(seed, stages.get(DIRECT_PPO, {}).get("probes", []))]
    return _csv(PROBES_HEADER, rows) if rows else None


def stage_curves_csv(stage: Path) -> str | None:
    """direct_ppo_curves.csv's text from one RPR stage directory: each finished step's metrics (also while it runs,
    read as the report reads a run's stages: `loop.phases.read_stage_metrics`)."""
    seed = read_json(Path(stage) / "config.json").get("seed", 0)
    rows = [[seed, Path(stage).name] + [m.get(k) for k in CURVE_KEYS] for m in read_stage_metrics(Path(stage))]
    return _csv(["seed", "stage", *CURVE_KEYS], rows) if rows else None


def stage_probes_csv(stage: Path) -> str | None:
    """direct_ppo_probes.csv's text from one RPR stage directory (its finished probes, also while it runs); the seed is
    the stage's training seed (its config.json)."""
    seed = read_json(Path(stage) / "config.json").get("seed", 0)
    rows = _probe_rows(seed, read_probes(Path(stage)))
    return _csv(PROBES_HEADER, rows) if rows else None


def heldout_csv(rep: dict) -> str | None:
    rows = [[seed, phase, r["stage"], kind, won, n]
            for seed, phases in rep.get("heldout", {}).items() for phase, h in phases.items()
            for r in h["rows"] for kind, (won, n) in r["by_kind"].items()]
    return _csv(["seed", "phase", "stage", "kind", "successes", "episodes"], rows) if rows else None


def turns_csv(rep: dict) -> str | None:
    keys = ("actions", "unparsed", "done", "tokens", "nll")
    rows = [[seed, stage, where, t["turn"], *(t[k] for k in keys)]
            for seed, stages in rep["curves"].items() for stage, c in stages.items()
            for where, turns in c.get("turns", {}).items() for t in turns]
    rows += [[seed, phase.lower(), f"heldout:{r['stage']}", t["turn"], *(t[k] for k in keys)]
             for seed, phases in rep.get("heldout", {}).items() for phase, h in phases.items()
             for r in h["rows"] for t in r.get("turns", [])]
    return _csv(["seed", "stage", "where", "turn", *keys], rows) if rows else None


RESULTS = REPO / "docs" / "results"
"""The committed summaries of the kit's latest `cpu` run; `RESULTS / "forgetting"`: the run whose RPR-1 forgot (notebook
05, section 6)."""


def source(results: Path = RESULTS) -> str:
    """Which run a directory of summaries comes from, in one line, from its MANIFEST.json."""
    m = json.loads((Path(results) / "MANIFEST.json").read_text())
    return (f"{m['run']} ({m['profile']} profile, seed {', '.join(map(str, m['seeds']))}: {', '.join(m['stages'])}; "
            f"commit {m['commit'][:7]}, {m['made']})")


def direct_source(results: Path = RESULTS) -> str:
    """Where the direct_ppo_* files come from, in one line (MANIFEST.json): the stage, its seed, how far it had run."""
    m = json.loads((Path(results) / "MANIFEST.json").read_text())
    r = m.get("from_other_runs", {}).get("direct_ppo_probes.csv")
    if r is None:
        return f"{m['run']} ({m['profile']} profile, its own direct-PPO control; commit {m['commit'][:7]})"
    done = ("finished" if r["finished"] else
            f"not finished: {r['steps_finished']} of its {r['steps_total']} steps (warm-up and calibration included)")
    return (f"{r['stage']} (seed {r['seed']}, {r['steps']} joint steps, {done}; written {r['made']} at commit "
            f"{r['written_at_commit'][:7]})")


def curve_rows(path, stage: str | None = None) -> list[dict]:
    """ppo_curves.csv (or direct_ppo_curves.csv) read back: the rows of `stage` (default: the file's first stage)
    for the first seed that has it, step as an int and every metric as a float (None where empty)."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    stage = stage or (rows[0]["stage"] if rows else None)
    rows = [r for r in rows if r["stage"] == stage]
    rows = [r for r in rows if r["seed"] == rows[0]["seed"]] if rows else []
    num = [k for k in CURVE_KEYS if k not in ("step", "phase")]
    return [{**r, "step": int(r["step"]), **{k: float(r[k]) if r.get(k) else None for k in num}} for r in rows]


def stage_runs(path) -> dict[str, dict[str, list[float]]]:
    """stages.csv read back as `teach.controls.stage_runs` gives a report: row label (stage or control) -> suite ->
    the success (%) of each evaluation run (the mean alone where the file has no runs)."""
    out: dict[str, dict[str, list[float]]] = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            runs = [float(x) for x in r["runs"].split(";") if x] or [float(r["success"])]
            out.setdefault(r["stage"], {})[r["suite"]] = [100 * x for x in runs]
    return out


def critic_ev(path) -> tuple[str, list[int], dict[str, list[float | None]]]:
    """critic_ev.csv read back for its first seed: (seed, steps, {"inherited": [...], "reset": [...]}), a value per
    step, None where that branch had no update at the step."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    rows = [r for r in rows if r["seed"] == rows[0]["seed"]]
    ev = {k: [float(r[k]) if r[k] else None for r in rows] for k in ("inherited", "reset")}
    return rows[0]["seed"], [int(r["step"]) for r in rows], ev


def first_ev(path) -> dict[str, float]:
    """critic_ev.csv read back as `teach.controls.first_ev` gives a report: each RPR-2 branch's explained variance
    before its first update (the first seed's), keyed by stage directory."""
    _, _, ev = critic_ev(path)
    return {"rpr-2": ev["inherited"][0], RESET: ev["reset"][0]}


def heldout_pairs(path) -> list[dict]:
    """heldout.csv read back as one row per seed, phase and kind: `before` and `after` (successes, episodes) of the
    phase's incoming checkpoint (`before_stage`) and of its actor, in the file's order."""
    pairs: dict[tuple, dict] = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            d = pairs.setdefault((r["seed"], r["phase"], r["kind"]), {"seed": r["seed"], "phase": r["phase"],
                                                                       "kind": r["kind"]})
            side = "after" if r["stage"] == r["phase"] else "before"
            d[side] = (int(r["successes"]), int(r["episodes"]))
            if side == "before":
                d["before_stage"] = r["stage"]
    return [d for d in pairs.values() if "before" in d and "after" in d]


def derive(run: Path, also=(), rep: dict | None = None) -> dict[str, str | None]:
    """Every summary's text by file name (None: its source is not in the run); `rep` the run's report if built."""
    rep = rep or build(Path(run), also)
    funnel = {str(s): f for s, f in rep["funnel"].items() if f}
    return {"stages.csv": stages_csv(rep), "ppo_curves.csv": curves_csv(rep), "critic_ev.csv": critic_ev_csv(rep),
            "direct_ppo_probes.csv": direct_ppo_csv(rep), "direct_ppo_curves.csv": curves_csv(rep, only=DIRECT_PPO),
            "heldout.csv": heldout_csv(rep), "turns.csv": turns_csv(rep),
            "funnel.json": json.dumps(funnel, indent=1, sort_keys=True) + "\n" if funnel else None}


def commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write(run: Path, out: Path, also=(), command: str | None = None) -> dict:
    """Write the summaries of `run` into `out` and return the manifest."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rep = build(Path(run), also)
    texts = derive(run, also, rep)
    before = read_json(out / "MANIFEST.json") if (out / "MANIFEST.json").is_file() else {}
    # files written from another run (`write_direct_ppo`) stay, with their record, where this run has none of its own
    kept = {n: r for n, r in before.get("from_other_runs", {}).items() if texts.get(n) is None and (out / n).is_file()}
    files, missing = {}, []
    for name, text in texts.items():
        if name in kept:
            files[name] = (out / name).stat().st_size
            continue
        if text is None:
            missing.append(name)
            (out / name).unlink(missing_ok=True)  # a stale file from another run must not pass for this one's
            continue
        write_text_atomic(out / name, text)
        files[name] = len(text.encode())
    manifest = {"command": command or "python -m rsi_lite.teach.results " + " ".join(map(str, [run, *also])),
                "commit": commit(), "run": str(run), "also": [str(a) for a in also], "profile": rep["profile"],
                "seeds": rep["seeds"], "stages": [r["stage"] for r in rep["stages"]],
                "controls": list(rep["controls"]),
                "made": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "files": files,
                "not_in_this_run": missing}
    if kept:
        manifest["from_other_runs"] = kept
    write_text_atomic(out / "MANIFEST.json", json.dumps(manifest, indent=1) + "\n")
    return manifest


def write_direct_ppo(stage: Path, out: Path, command: str | None = None) -> dict:
    """Add direct_ppo_probes.csv and direct_ppo_curves.csv to `out` from an RPR stage run from Base on its own
    (`rsi-lite rpr --from base`), and record where they came from in out/MANIFEST.json (`from_other_runs`); return
    the manifest."""
    stage, out = Path(stage), Path(out)
    if not (stage / "config.json").is_file():
        raise FileNotFoundError(f"--direct-ppo {stage}: no config.json there (expected an RPR stage directory, "
                                "e.g. runs/direct/rpr-1-from-base)")
    from ..rpr.batches import schedule
    from ..rpr.config import RPRConfig

    cfg = read_json(stage / "config.json")
    if cfg.get("init") != "base":
        raise ValueError(f"{stage / 'config.json'}: init is {cfg.get('init')!r}; the direct-PPO control starts from "
                         "'base'")
    try:
        steps_total = len(schedule(RPRConfig.from_dict(cfg)))  # the warm-up and calibration included
    except (TypeError, ValueError) as e:
        raise ValueError(f"{stage / 'config.json'}: not an RPR stage's config: {e}") from e
    texts = {"direct_ppo_probes.csv": stage_probes_csv(stage), "direct_ppo_curves.csv": stage_curves_csv(stage)}
    if texts["direct_ppo_probes.csv"] is None:
        raise ValueError(f"--direct-ppo {stage}: no finished probe (probe-*/DONE) yet: nothing to write")
    path = out / "MANIFEST.json"
    manifest = read_json(path) if path.is_file() else {"files": {}, "not_in_this_run": []}
    out.mkdir(parents=True, exist_ok=True)
    steps = StageDir(stage)
    record = {"command": command or f"python -m rsi_lite.teach.results --direct-ppo {stage}",
              "written_at_commit": commit(), "stage": str(stage), "seed": cfg.get("seed", 0), "steps": cfg.get("steps"),
              "steps_total": steps_total,
              "steps_finished": len(steps.finished("step")), "finished": steps.done,
              "made": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    for name, text in texts.items():
        if text is None:
            continue
        write_text_atomic(out / name, text)
        manifest.setdefault("files", {})[name] = len(text.encode())
        manifest["not_in_this_run"] = [n for n in manifest.get("not_in_this_run", []) if n != name]
        manifest.setdefault("from_other_runs", {})[name] = record
    write_text_atomic(path, json.dumps(manifest, indent=1) + "\n")
    return manifest


def direct_probes(path) -> list[dict]:
    """direct_ppo_probes.csv read back: one dict per probe (seed, before_step, episodes, successes as ints, the rest
    as the file has them), in the file's order."""
    with open(path) as f:
        return [{**r, **{k: int(r[k]) for k in ("seed", "before_step", "episodes", "successes") if r[k] != ""}}
                for r in csv.DictReader(f)]


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description="docs/results/: small summaries of a run of the five-phase loop")
    p.add_argument("run", nargs="?", help="a run directory of `rsi-lite run` (runs/<profile>)")
    p.add_argument("--also", nargs="*", default=[], help="further runs of the same profile (other seeds)")
    p.add_argument("--direct-ppo", metavar="STAGE",
                   help="instead: add direct_ppo_probes.csv from the direct-PPO branch run on its own "
                        "(runs/direct/rpr-1-from-base)")
    p.add_argument("--out", default=str(REPO / "docs" / "results"))
    args = p.parse_args(argv)
    command = "python -m rsi_lite.teach.results " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.direct_ppo:
        if args.run:
            p.error("give a run directory or --direct-ppo STAGE, not both")
        return write_direct_ppo(Path(args.direct_ppo), Path(args.out), command)
    if not args.run:
        p.error("a run directory (or --direct-ppo STAGE) is required")
    return write(Path(args.run), Path(args.out), args.also, command)


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
