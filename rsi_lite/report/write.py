"""`rsi-lite report DIR`: the paper's tables for a run of the five-phase loop.

Reads only the run's files (`loop` documents them), so it works on a finished run, on a
run still going (the rows that exist), and on a run copied from another machine. Writes
`report.json` (the data), `report.md` (the tables) and `report.html` (tables + plotly
figures), each atomically.

The paper's figures appear as reference rows, labelled as the paper's, next to ours; the
mini suites are not the paper's benchmarks (core ~ TB 2.1, hard ~ TB Hard, multi ~ TB 3.0,
extreme ~ TB 4.0 only in their role), so compare shapes, not numbers.
"""

from __future__ import annotations

import html
import statistics
from pathlib import Path

from ..eval.turns import step_turns, turns_markdown
from ..loop.phases import CONTROLS, STAGES, eval_dir, read_stage_metrics
from ..loop.profiles import TABLE_SUITES
from ..records import read_json, write_json_atomic, write_text_atomic
from ..rundir import StageDir, rsr_dir, seed_dir
from .claims import claims, refinement_sentences
from .heldout import heldout_markdown, heldout_rows, refinement_room
from .shadow import shadow_findings, shadow_markdown

PAPER_TABLE2 = {"Base": [51.70, 31.00, 0.00, 0.00], "RSR-1": [70.10, 54.00, 6.80, 6.10],
                "RPR-1": [77.53, 69.50, 14.29, 16.67], "RSR-2": [86.52, 76.00, 15.02, 17.46],
                "RPR-2": [86.52, 79.00, 16.95, 19.84]}
"""Table 2 of the paper (TB 2.1, TB Hard, TB 3.0, TB 4.0; some cells reasoned, see docs/paper.md)."""
PAPER_SWR = {"Base": 3, "RSR-1": 5, "RPR-1": 6, "RSR-2": 6, "RPR-2": 6}
PAPER_LHTB_STRICT = {"Base": 0, "RSR-1": 0, "RPR-1": 2, "RSR-2": 4, "RPR-2": 5}
"""Strict completions of 46 LHTB tasks; process reward went 0.21 (Base) -> 0.29 (RSR-1) -> 0.37 (RPR-2)."""
SUITE_FIELDS = ("success", "k", "n_tasks", "strict", "episodes", "process_reward")
CURVE_KEYS = ("step", "phase", "success/mean", "success/any", "batch/learnable", "ratio/min", "ratio/mean",
              "ratio/max", "losses/clipfrac", "losses/approx_kl", "losses/explained_variance_before", "returns/std",
              "reward/mean")
"""The per-step PPO metrics the report carries (metrics.jsonl has more)."""


def read_probes(d: Path) -> list[dict]:
    """An RPR stage's probes of its pool (also while it runs), without the per-task counts."""
    rows = [p.read("metrics.json") for p in StageDir(d).finished("probe")]
    return [{k: v for k, v in r.items() if k != "by_task"} for r in rows]


def _seed_dirs(run: Path) -> list[tuple[int, Path]]:
    seeds = read_json(run / "run.json")["seeds"]
    return [(s, seed_dir(run, seeds, s)) for s in seeds]


def _differences(a, b, where: str = "") -> list[str]:
    """The fields two profiles (nested dicts) disagree on, as "path: a vs b"."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _differences(a.get(k), b.get(k), f"{where}.{k}".lstrip("."))]
    return [] if a == b else [f"{where}: {a} vs {b}"]


def _runs_of_seeds(run: Path, also) -> tuple[list[tuple[int, Path, Path]], list[str]]:
    """(seed, its run, its directory) for `run` and the further runs `also` of the same profile, and where their
    profiles differ. Each run keeps its own Base evaluation; a seed may appear in one run only."""
    meta = read_json(run / "run.json")
    out, notes = [(s, run, d) for s, d in _seed_dirs(run)], []
    for other in map(Path, also):
        path = other / "run.json"
        if not path.is_file():
            raise ValueError(f"{path}: missing (not a run directory of `rsi-lite run`)")
        om = read_json(path)
        if om["profile"]["name"] != meta["profile"]["name"]:
            raise ValueError(f"{path}: profile.name {om['profile']['name']!r}, but {run} is a "
                             f"{meta['profile']['name']!r} run: only seeds of one profile share a table")
        dup = sorted({s for s, _ in _seed_dirs(other)} & {s for s, _, _ in out})
        if dup:
            raise ValueError(f"{path}: seeds {dup} are already in the runs before it (a seed is one training run)")
        out += [(s, other, d) for s, d in _seed_dirs(other)]
        notes += [f"{other} vs {run}: profile.{d}" for d in _differences(om["profile"], meta["profile"])]
    return out, notes


def seed_report(run: Path, d: Path) -> dict:
    """One seed's stages, controls, selection, funnels, curves and cost."""
    def stage_row(label: str) -> dict | None:
        e = eval_dir(d, label, run / "eval-base")
        doc = StageDir(e).read("results.json") if StageDir(e).done else None
        if doc is None:
            return None
        return {"stage": label, "checkpoint": doc["checkpoint"],
                "suites": {s: {**{f: r[f] for f in SUITE_FIELDS}, "runs": r.get("runs", [r["success"]])}
                           for s, r in doc["suites"].items()}}

    selection = StageDir(d).read("selection.json", {})
    retained = {v["retained"] for v in selection.values()}
    stages = [r for r in map(stage_row, STAGES) if r]
    for r in stages:
        r["retained"] = r["stage"] in retained or (r["stage"] == "Base" and not selection)
    controls = {label: r for label, _ in CONTROLS.values() if (r := stage_row(label))}
    funnels = {f"RSR-{c}": f for c in (1, 2) if (f := rsr_dir(d, c).read("funnel.json", None))}
    curves = {}
    for name in ["rpr-1", "rpr-2"] + [dirname for _, dirname in CONTROLS.values()]:
        rows = read_stage_metrics(d / name) if (d / name).is_dir() else []
        if rows:
            curves[name] = {k: [r.get(k) for r in rows] for k in CURVE_KEYS}
            curves[name]["probes"] = read_probes(d / name)
            curves[name]["turns"] = step_turns(d / name)
    return {"stages": stages, "controls": controls, "selection": selection, "funnel": funnels, "curves": curves,
            "cost": StageDir(d).read("cost.json", {}), "result": StageDir(d).read("result.json", None),
            "reward_shares": {name: failure_shares(d / name) for name in ("rpr-1", "rpr-2", "rpr-2-fdr")
                              if (d / name).is_dir()},
            "shadow": shadow_findings(run, d), "heldout": heldout_rows(d),
            "room": refinement_room(run, d, selection)}


def stage_trajectories(d: Path) -> list:
    """An RPR stage's training episodes: every step's `trajectories.jsonl`, oldest first (warm-up and calibration
    included)."""
    from ..rollout.trajectory import read_trajectories

    return [t for f in StageDir(d).trajectory_files() for t in read_trajectories(f)]


def failure_shares(d: Path) -> dict:
    """Failures' share of all FDR and all SPR reward over an RPR stage's training episodes (the paper's audit:
    50.09% under FDR, 28.72% under SPR)."""
    trajs = stage_trajectories(d)
    out = {"episodes": len(trajs), "failures": sum(not t.verifier.get("strict") for t in trajs)}
    for kind in ("fdr", "spr"):
        total = sum(t.rewards.get(kind, 0.0) for t in trajs)
        fail = sum(t.rewards.get(kind, 0.0) for t in trajs if not t.verifier.get("strict"))
        out[kind] = fail / total if total else None
    return out


def mean_of_four(row: dict) -> float | None:
    vals = [row["suites"][s]["success"] for s in TABLE_SUITES if s in row["suites"]]
    return sum(vals) / len(vals) if len(vals) == len(TABLE_SUITES) else None


def _spread(rows: list[dict]) -> dict:
    """Several seeds' rows of one stage -> one row: means, with the sd across seeds per suite."""
    out = {"stage": rows[0]["stage"], "checkpoint": [r["checkpoint"] for r in rows],
           "retained": [r["retained"] for r in rows] if "retained" in rows[0] else None, "suites": {}}
    for s in rows[0]["suites"]:
        have = [r["suites"][s] for r in rows if s in r["suites"]]
        succ = [h["success"] for h in have]
        out["suites"][s] = {**{f: have[0][f] for f in ("k", "n_tasks")},
                            "runs": [x for h in have for x in h.get("runs", [h["success"]])],
                            "success": statistics.mean(succ), "success_sd": statistics.stdev(succ) if len(succ) > 1 else 0.0,
                            "strict": statistics.mean(h["strict"] for h in have),
                            "episodes": have[0]["episodes"],
                            "process_reward": statistics.mean(h["process_reward"] for h in have), "seeds": len(have)}
    return out


def build(run: Path, also=()) -> dict:
    """The report of `run`; with `also`, further runs of the same profile (say a second training seed run with
    `--cycles 1`) join it: each stage's row is the mean over the seeds that ran it, with their sd, and its
    per-run successes (the claims' spread) are every seed's."""
    run = Path(run)
    meta = read_json(run / "run.json")
    seed_dirs, differences = _runs_of_seeds(run, also)
    per_seed = {s: seed_report(r, d) for s, r, d in seed_dirs}
    first = next(iter(per_seed.values()))
    if len(per_seed) == 1:
        stages, controls = first["stages"], first["controls"]
    else:
        stages = [_spread(rows) for st in STAGES
                  if (rows := [r for p in per_seed.values() for r in p["stages"] if r["stage"] == st])]
        labels = dict.fromkeys(c for p in per_seed.values() for c in p["controls"])
        controls = {c: _spread([p["controls"][c] for p in per_seed.values() if c in p["controls"]]) for c in labels}
    for r in stages + list(controls.values()):
        r["mean_of_four"] = mean_of_four(r)
    by = {r["stage"]: r["mean_of_four"] for r in stages}
    gains = {}
    if by.get("Base") is not None and by.get("RPR-1") is not None:
        gains["cycle_one"] = by["RPR-1"] - by["Base"]
    if by.get("RPR-1") is not None and by.get("RPR-2") is not None:
        gains["cycle_two"] = by["RPR-2"] - by["RPR-1"]
    cost = {s: p["cost"] for s, p in per_seed.items()} if len(per_seed) > 1 else first["cost"]
    return {"run": str(run), "also": [str(a) for a in also], "profile_differences": differences,
            "profile": meta["profile"]["name"], "seeds": list(per_seed), "stages": stages,
            "controls": controls, "gains": gains, "cost": cost,
            "selection": {s: p["selection"] for s, p in per_seed.items()},
            "funnel": {s: p["funnel"] for s, p in per_seed.items()},
            "curves": {s: p["curves"] for s, p in per_seed.items()},
            "final": {s: p["result"] for s, p in per_seed.items()},
            "reward_shares": {s: p["reward_shares"] for s, p in per_seed.items()},
            "shadow": {s: p["shadow"] for s, p in per_seed.items()},
            "heldout": {s: p["heldout"] for s, p in per_seed.items()},
            "room": {s: p["room"] for s, p in per_seed.items()},
            "floor": StageDir(run / "eval-floor").read("floor.json") if StageDir(run / "eval-floor").done else None,
            "reference": {"table2": PAPER_TABLE2, "swr": PAPER_SWR, "lhtb_strict_of_46": PAPER_LHTB_STRICT}}


# ---------------------------------------------------------------- text

def _pct(r: dict, s: str) -> str:
    if s not in r["suites"]:
        return "-"
    c = r["suites"][s]
    sd = f" ± {100 * c['success_sd']:.1f}" if c.get("seeds", 1) > 1 else ""
    return f"{100 * c['success']:.1f}{sd}"


FLOOR_MARGIN = 0.01  # a process reward this far under the floor is reported as below it


def below_floor(rep: dict) -> list[tuple[str, str, float, float]]:
    """(stage, suite, process reward, floor) for every row and suite whose process reward is at least
    FLOOR_MARGIN under the floor's: the actor breaks checks an untouched workspace passes."""
    floor = (rep.get("floor") or {}).get("suites", {})
    out = []
    for r in rep["stages"] + list(rep["controls"].values()):
        for s, f in floor.items():
            pr = r["suites"].get(s, {}).get("process_reward")
            if pr is not None and pr <= f["process_reward"] - FLOOR_MARGIN:
                out.append((r["stage"], s, pr, f["process_reward"]))
    return out


def stage_table(rep: dict) -> str:
    rows = rep["stages"] + list(rep["controls"].values())
    k = sorted({r["suites"][s]["k"] for r in rows for s in r["suites"]}) or ["?"]
    mixed = len(k) > 1  # runs per task differ by suite (the tiny profile): each column says its own

    def col(s: str, bare: bool = False) -> str:
        have = [r["suites"][s] for r in rows if s in r["suites"]]
        if not have or (bare and not mixed):
            return s
        return f"{s} ({have[0]['n_tasks']}" + (f", k={have[0]['k']})" if mixed else ")")

    head = ("| stage | " + " | ".join(col(s) for s in TABLE_SUITES) + f" | mean of four | {col('swr', True)} | "
            f"lhtb process | lhtb strict | {col('val', True)} |\n|---|" + "---:|" * 9)
    runs = f"Mean@{k[0]} (k={k[0]})" if not mixed else "Mean@k, k runs per task"
    lines = [f"Success %, {runs}; tasks per suite{' and k' if mixed else ''} in brackets"
             + (f"; mean ± sd over seeds {rep['seeds']}" if len(rep["seeds"]) > 1 else "") + ".", "", head]
    for r in rows:
        mof = f"{100 * r['mean_of_four']:.1f}" if r.get("mean_of_four") is not None else "-"
        lh = r["suites"].get("lhtb")
        lhtb = f"{lh['process_reward']:.3f} | {lh['strict']:g}/{lh['episodes']}" if lh else "- | -"
        mark = " (retained)" if r.get("retained") is True else ""
        lines.append(f"| {r['stage']}{mark} | " + " | ".join(_pct(r, s) for s in TABLE_SUITES)
                     + f" | {mof} | {_pct(r, 'swr')} | {lhtb} | {_pct(r, 'val')} |")
    if rep.get("floor"):  # the verifiers on untouched workspaces: what a row gets for free
        fl = {"suites": rep["floor"]["suites"]}
        lh = fl["suites"].get("lhtb")
        lhtb = f"{lh['process_reward']:.3f} | {lh['strict']}/{lh['n_tasks']}" if lh else "- | -"
        lines.append("| *doing nothing (no command)* | " + " | ".join(_pct(fl, s) for s in TABLE_SUITES)
                     + f" | - | {_pct(fl, 'swr')} | {lhtb} | {_pct(fl, 'val')} |")
        lines += ["", "The last row is the floor: every evaluated task's verifier on its untouched workspace. "
                  "A process reward at that row's figure is credit for checks that pass with no action, not "
                  "work done."]
        if low := below_floor(rep):
            lines += ["", "Below the floor (a process reward at least 0.01 under it): " + "; ".join(
                f"{st} on {s} {pr:.3f} (floor {f:.3f})" for st, s, pr, f in low)
                + ". There the actor breaks checks that pass on the untouched workspace."]
    lines.append("")
    lines.append("| paper, Table 2 | TB 2.1 | TB Hard | TB 3.0 | TB 4.0 | mean of four | SWR100 | LHTB process | "
                 "LHTB strict | |\n|---|" + "---:|" * 9)
    lhtb_p = {"Base": "0.21", "RSR-1": "0.29", "RPR-2": "0.37"}
    for st, v in PAPER_TABLE2.items():
        lines.append(f"| {st} | " + " | ".join(f"{x:.2f}" for x in v) + f" | {sum(v) / 4:.2f} | {PAPER_SWR[st]} | "
                     f"{lhtb_p.get(st, '-')} | {PAPER_LHTB_STRICT[st]}/46 | |")
    return "\n".join(lines)


def markdown(rep: dict) -> str:
    out = [f"# rsi-lite run: {rep['run']} (profile `{rep['profile']}`)", ""]
    if rep.get("also"):
        out += [f"Joined by the seeds of {', '.join(rep['also'])}: a stage's row is the mean over the seeds that ran "
                "it (± their sd where more than one did), and the claims' spread spans every seed's runs."]
        out += [f"- the profiles differ: {d}" for d in rep["profile_differences"]] + [""]
    out += ["## Stage table", "", stage_table(rep), ""]
    said = refinement_sentences(rep)
    if said:
        out += ["## What refinement did in this run", ""] + [f"- {x}" for x in said] + [""]
    out += ["## The paper's claims, checked on this run", "", "| claim | verdict | figures |", "|---|---|---|"]
    out += [f"| {c['claim']} | {c['verdict']} | {c['figures'] or '-'} |" for c in claims(rep)] + [""]
    g = rep["gains"]
    if g:
        out += ["## Cycle gains (mean of four, points)", ""]
        if "cycle_one" in g:
            out.append(f"- cycle one (Base -> RPR-1): {100 * g['cycle_one']:+.2f} (paper +23.82)")
        if "cycle_two" in g:
            out.append(f"- cycle two (RPR-1 -> RPR-2): {100 * g['cycle_two']:+.2f} (paper +6.08)")
        out.append("")
    for seed, sel in rep["selection"].items():
        if sel:
            out += [f"## Checkpoint selection on val (seed {seed})", ""]
            out += [f"- after {ph}: kept **{v['retained']}** — {v['why']}" for ph, v in sel.items()] + [""]
    for seed, fun in rep["funnel"].items():
        if fun:
            out += [f"## Discovery funnel per cycle (seed {seed})", "", "| | " + " | ".join(fun) + " |",
                    "|---|" + "---:|" * len(fun)]
            for key in ("discovery_episodes", "discovery_successes", "tasks_solved", "runbooks", "approved",
                        "resolves", "accepted", "examples", "training_tokens"):
                out.append(f"| {key.replace('_', ' ')} | " + " | ".join(str(f.get(key, '-')) for f in fun.values()) + " |")
            out.append("")
    for seed, curves in rep["curves"].items():
        for name, c in curves.items():
            out += [f"## PPO per step: {name} (seed {seed})", "", ppo_table(c), ""]
            out += turns_markdown(f"The actor's replies per step, turn by turn: {name} (seed {seed})", c.get("turns", {}))
    if rep["curves"]:
        out += ["Explained variance is the critic's, before each update: 1 - Var(returns - values) / Var(returns) "
                "over action tokens. Where the returns barely vary (a small std), a small error in the values "
                "reads as a large negative figure.", ""]
    for seed, phases in rep.get("heldout", {}).items():
        for phase, h in phases.items():
            out += heldout_markdown(phase, h, seed if len(rep["heldout"]) > 1 else None)
    for seed, found in rep.get("shadow", {}).items():
        out += shadow_markdown(found, "Successes that may be pretending (shadow replay)"
                               + (f", seed {seed}" if len(rep["shadow"]) > 1 else ""))
    cost = rep["cost"]
    flat = {f"seed {s}: {k}": v for s, c in cost.items() for k, v in c.items()} if len(rep["seeds"]) > 1 else cost
    if flat:
        out += ["## Cost per stage", "", "| stage | episodes | generated tokens | sandbox s | wall s | paused s | "
                "CPU s (process / machine) | cores busy | peak RSS of the process, MB |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, c in flat.items():
            cpu = c.get("cpu_s")
            cpu_cell = f"{cpu['process']} / {cpu.get('machine', '-')}" if cpu else "-"
            out.append(f"| {name} | {c['episodes']} | {c['generated_tokens']} | {c['sandbox_s']} | "
                       f"{c['wall_s'] if c['wall_s'] is not None else '-'} | "
                       f"{c['paused_s'] if c.get('paused_s') is not None else '-'} | {cpu_cell} | "
                       f"{c.get('cpu_share') or '-'} | {c['peak_rss_mb'] or '-'} |")
        walls = [c["wall_s"] for c in flat.values() if c["wall_s"]]
        paused = sum(c.get("paused_s") or 0 for c in flat.values())
        old = any(c["wall_s"] is not None and c.get("paused_s") is None for c in flat.values())
        timed = [(c["cpu_share"] * c["wall_s"], c["wall_s"]) for c in flat.values() if c.get("cpu_share") and c["wall_s"]]
        busy = (f" CPU over the stages that recorded it: {100 * sum(u for u, _ in timed) / sum(w for _, w in timed):.0f}% "
                "of their wall (200% = both cores of a 2-core machine busy throughout)." if timed else "")
        out += ["", f"Total wall time of the stages: {sum(walls) / 60:.1f} min"
                + (f" (the process also stood stopped {paused / 60:.1f} min, not counted)." if paused else ".") + busy
                + (" A '-' under paused: recorded before pauses were measured, so that wall includes any." if old
                   else ""), ""]
        out += breakdown_table(flat)
    return "\n".join(out)


BREAKDOWN = [("model/load", "load"), ("model/serve", "serve weights"), ("rollout/generating", "generating"),
             ("rollout/waiting", "slots idle"), ("train/sft", "SFT"), ("train/ppo", "PPO"), ("other", "other")]


def breakdown_table(cost: dict) -> list[str]:
    """Where each stage's wall went (seconds; `timing`), and the model's forwards' share of the wall."""
    rows = {name: c["breakdown"] for name, c in cost.items() if c.get("breakdown") and c.get("wall_s")}
    if not rows:
        return []
    out = ["## Where the wall went (seconds)", "",
           "Wall phases add up to the stage's wall; forwards (the model's own compute while generating) and the "
           "sandbox seconds are summed over threads that ran at the same time.", "",
           "| stage | wall | " + " | ".join(h for _, h in BREAKDOWN) + " | forwards (share) | prefilled / decoded "
           "tokens | sandbox open / commands / verifier |", "|---|" + "---:|" * (len(BREAKDOWN) + 4)]
    for name, b in rows.items():
        wall = cost[name]["wall_s"]
        fw = b.get("rollout/forward")
        out.append(f"| {name} | {wall} | " + " | ".join(str(b.get(k, 0)) for k, _ in BREAKDOWN)
                   + f" | {'-' if fw is None else f'{fw} ({100 * fw / wall:.0f}%)'} | "
                   f"{b.get('rollout/prefill_tokens', '-')} / {b.get('rollout/decode_tokens', '-')} | "
                   f"{b.get('sandbox/open', 0)} / {b.get('sandbox/commands', 0)} / {b.get('sandbox/verifier', 0)} |")
    return out + [""]


def ppo_table(c: dict) -> str:
    """One stage's steps: batch success, the frontier's size, how far the actor moved, the critic; then the probes."""
    def f(x, fmt):
        return "-" if x is None or x != x else format(x, fmt)

    lines = ["| step | phase | batch success | learnable tasks | ratio min / mean / max | clip fraction | approx KL "
             "| explained variance | returns' std |", "|---:|---|---:|---:|---|---:|---:|---:|---:|"]
    for i in range(len(c["phase"])):
        g = {k: c[k][i] for k in CURVE_KEYS}
        lines.append(f"| {g['step'] if g['step'] is not None else i} | {g['phase']} | {f(g['success/mean'], '.2f')} | "
                     f"{f(g['batch/learnable'], 'd')} | {f(g['ratio/min'], '.3f')} / {f(g['ratio/mean'], '.3f')} / "
                     f"{f(g['ratio/max'], '.3f')} | {f(g['losses/clipfrac'], '.3f')} | {f(g['losses/approx_kl'], '.1e')} | "
                     f"{f(g['losses/explained_variance_before'], '.2f')} | {f(g['returns/std'], '.3f')} |")
    probes = c.get("probes") or []
    if probes:
        lines += ["", "Probes of the PPO pool (the same tasks and seeds each time, training rollout settings):", "",
                  "| before step | episodes | pool success | tasks solved | tasks learnable |", "|---:|---:|---:|---:|---:|"]
        lines += [f"| {p['before_step']} | {p['episodes']} | {p['pool_success']:.3f} | {p['tasks_solved']} | "
                  f"{p['tasks_learnable']} |" for p in probes]
    if probes and "by_kind" in probes[0]:  # the kind rule: its probe tasks are held out of every batch
        lines += ["", "Success by kind on the probe tasks, which no batch trained on (successes / episodes):", "",
                  "| kind | " + " | ".join(f"before step {p['before_step']}" for p in probes) + " |",
                  "|---|" + "---:|" * len(probes)]
        lines += [f"| {kind} | " + " | ".join("{}/{}".format(*p["by_kind"].get(kind, [0, 0])) for p in probes) + " |"
                  for kind in probes[0]["by_kind"]]
    return "\n".join(lines)


def figures(rep: dict) -> list:
    import plotly.graph_objects as go

    figs = []
    rows = rep["stages"]
    if rows:
        fig = go.Figure([go.Bar(name=s, x=[r["stage"] for r in rows],
                                y=[100 * r["suites"][s]["success"] if s in r["suites"] else None for r in rows])
                         for s in TABLE_SUITES + ["swr", "val"]])
        fig.update_layout(title="Success per stage and suite (%)", barmode="group")
        figs.append(fig)
    for seed, curves in rep["curves"].items():
        if not curves:
            continue
        ev = go.Figure([go.Scatter(y=c["losses/explained_variance_before"], name=name, mode="lines+markers")
                        for name, c in curves.items()])
        ev.update_layout(title=f"Critic explained variance per step (seed {seed})", xaxis_title="step")
        rw = go.Figure([go.Scatter(y=c["reward/mean"], name=name, mode="lines+markers") for name, c in curves.items()])
        rw.update_layout(title=f"Mean training reward per step (seed {seed})", xaxis_title="step")
        pool = go.Figure([go.Scatter(x=[p["before_step"] for p in c["probes"]], y=[p["pool_success"] for p in c["probes"]],
                                     name=name, mode="lines+markers") for name, c in curves.items() if c.get("probes")])
        pool.update_layout(title=f"Success on the PPO pool, probed (seed {seed})", xaxis_title="steps done")
        ratio = go.Figure([go.Scatter(y=c[k], name=f"{name} {k}", mode="lines") for name, c in curves.items()
                           for k in ("ratio/min", "ratio/max")])
        ratio.update_layout(title=f"PPO ratio range per step (seed {seed})", xaxis_title="step")
        figs += [ev, rw, pool, ratio]
    return figs


def write_report(run: Path, also=(), out: Path | None = None) -> dict:
    """report.json, .md and .html of `run` (joined by the runs `also`, see `build`) in `out` (default: `run`)."""
    run = Path(run)
    rep = build(run, also)
    out = Path(out) if out else run
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "report.json", rep)
    md = markdown(rep)
    write_text_atomic(out / "report.md", md)
    body = "".join(f.to_html(full_html=False, include_plotlyjs="cdn" if i == 0 else False)
                   for i, f in enumerate(figures(rep)))
    page = (f"<!doctype html><meta charset='utf-8'><title>rsi-lite report</title>"
            f"<pre style='white-space:pre-wrap'>{html.escape(md)}</pre>{body}")
    write_text_atomic(out / "report.html", page)
    return rep


