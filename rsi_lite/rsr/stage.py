"""The RSR stage: discovery -> runbooks -> review -> guided re-solve -> clean -> masked SFT.

Each step is a function from files in `DIR/rsr-N/` to a file of its own, written
atomically; a step whose file exists is not run again, so `rsi-lite rsr --run DIR --cycle N`
continues where a killed run stopped. `DONE` is written last.

    discovery.jsonl   every discovery episode (all harnesses, all samples)
    successes.jsonl   the strict successes kept as sources (at most `max_sources_per_task` per task)
    runbooks.jsonl    runbooks from both planners, with which planner wrote each
    reviews.jsonl     the reviewer's verdict on each runbook
    resolves.jsonl    the guided re-solves (plain harness, runbook as private guidance)
    prefixes.json     with `keep_passing_prefix` / `trim_after_pass`: re-solves to cut after their first passing action
    dataset.jsonl     the accepted re-solves, cleaned: ids + loss mask
    metrics.jsonl     SFT steps;  checkpoint/  the actor adapter;  funnel.json  the counts
"""

from __future__ import annotations

import json
from pathlib import Path

from ..policy.actor import load_actor, save_actor
from ..records import read_jsonl, write_json_atomic, write_jsonl_atomic
from ..rollout.engine import RolloutConfig, run_episodes
from ..rollout.trajectory import Trajectory, read_trajectories, write_trajectories
from ..rundir import StageDir, rsr_dir
from ..tasks.suites import pool_tasks
from .clean import Example, build_example
from .config import RSRConfig
from .leakage import find_leaks, ngrams
from .prefix import cut_after, passing_prefixes
from .review import Verdict, model_review, review
from .runbook import extractive_runbook, model_runbooks, render
from .sft import train_sft

# ---------------------------------------------------------------- the steps

def discover(policy, tasks, cfg: RSRConfig, out: Path, progress=False) -> list[Trajectory]:
    """Step 1: every task under every discovery harness, `discovery_samples` times, then, when `retry_samples` is
    set, the tasks none of those solved again, `retry_samples` times per harness at `retry_temperature`. Each
    pass writes one file per harness first, so a killed discovery keeps the harnesses it finished."""
    def one_pass(name, jobs, rc):
        trajs = []
        for h in cfg.discovery_harnesses:
            part = out.with_name(f"{out.stem}{name}-{h}.jsonl")
            if not part.is_file():
                rch = RolloutConfig(**{**rc.to_dict(), "harness": h})
                write_trajectories(run_episodes(policy, jobs, rch, policy_name=cfg.init, progress=progress), part)
            trajs += read_trajectories(part)
        return trajs

    first = range(cfg.discovery_samples)
    trajs = one_pass("", [(t, s) for s in first for t in tasks], cfg.rollout)
    if cfg.retry_samples > 0:
        solved = {t.task for t in trajs if t.verifier.get("strict")}
        left = [t for t in tasks if t.name not in solved]
        seeds = range(cfg.discovery_samples, cfg.discovery_samples + cfg.retry_samples)
        rc = RolloutConfig(**{**cfg.rollout.to_dict(), "temperature": cfg.retry_temperature})
        trajs += one_pass("-retry", [(t, s) for s in seeds for t in left], rc)
    write_trajectories(trajs, out)
    for name in ("", "-retry"):
        for h in cfg.discovery_harnesses:
            out.with_name(f"{out.stem}{name}-{h}.jsonl").unlink(missing_ok=True)
    return trajs


def select_sources(trajs: list[Trajectory], per_task: int) -> list[Trajectory]:
    """Strict successes, at most `per_task` of each task, fewest turns first."""
    kept, count = [], {}
    for t in sorted((t for t in trajs if t.verifier.get("strict")), key=lambda t: (t.task, t.turns)):
        if count.get(t.task, 0) < per_task:
            kept.append(t)
            count[t.task] = count.get(t.task, 0) + 1
    return kept


def _instruction(task_path: str) -> str:
    return (Path(task_path) / "instruction.md").read_text()


def plan(policy, sources: list[Trajectory], cfg: RSRConfig) -> tuple[list[dict], dict]:
    """Step 2: runbooks from each source; returns the rows and the model planner's schema-pass record."""
    from .clean import clean_turns

    stripped = [[m for m, _ in clean_turns(t)] for t in sources]
    rows, sampled, valid = [], 0, 0
    model_books = [[] for _ in sources]
    if cfg.planner in ("model", "both") and sources:
        model_books = model_runbooks(policy, [(_instruction(t.task_path), s) for t, s in zip(sources, stripped)],
                                     k=cfg.runbooks_per_success, seed=cfg.rollout.seed,
                                     backend=cfg.rollout.generation_backend, max_new_tokens=cfg.planner_tokens,
                                     transcript_chars=cfg.planner_transcript_chars,
                                     action_format=cfg.rollout.action_format)
    for i, (t, msgs) in enumerate(zip(sources, stripped)):
        seen = set()

        def add(book, planner, raw=""):
            key = json.dumps(book, sort_keys=True)
            if key not in seen:
                seen.add(key)
                rows.append({"id": len(rows), "task": t.task, "task_path": t.task_path, "source": i,
                             "source_harness": t.harness, "planner": planner, "runbook": book, "raw": raw})

        for book, raw in model_books[i]:
            sampled += 1
            if book is not None:
                valid += 1
                add(book, "model", raw)
        if cfg.planner in ("extractive", "both"):
            book = extractive_runbook(_instruction(t.task_path), msgs, t.action_format)
            if book is not None:
                add(book, "extractive")
    return rows, {"sampled": sampled, "valid": valid, "pass_rate": valid / sampled if sampled else None}


def review_all(policy, rows: list[dict], cfg: RSRConfig) -> list[dict]:
    """Step 3: the reviewer's verdict on every runbook."""
    from ..tasks import load_task

    out = []
    for r in rows:
        task = load_task(Path(r["task_path"]))
        v = review(r["runbook"], task)
        if v.approved and cfg.model_reviewer and not model_review(policy, task.instruction, r["runbook"],
                                                                  cfg.rollout.generation_backend):
            v = Verdict(False, ["model reviewer: NO"])
        out.append({"id": r["id"], "task": r["task"], **v.to_dict()})
    return out


def resolve(policy, rows: list[dict], verdicts: list[dict], cfg: RSRConfig, out: Path,
            progress=False) -> list[Trajectory]:
    """Step 4: M guided re-solves of each approved runbook under the plain harness; each records the runbook's id
    (`meta["runbook"]`)."""
    from ..tasks import load_task

    ok = {v["id"] for v in verdicts if v["approved"]}
    jobs, which = [], []
    for r in rows:
        if r["id"] in ok:
            task = load_task(Path(r["task_path"]))
            for m in range(cfg.resolves_per_runbook):
                jobs.append((task, m, render(r["runbook"])))
                which.append(r["id"])
    rc = RolloutConfig(**{**cfg.rollout.to_dict(), "harness": "exemplar" if cfg.resolve_with_examples else "plain"})
    trajs = run_episodes(policy, jobs, rc, policy_name=cfg.init, progress=progress)
    for t, rid in zip(trajs, which, strict=True):  # run_episodes answers in job order
        t.meta["runbook"] = rid
    write_trajectories(trajs, out)
    return trajs


def runbooks_of(resolves: list[Trajectory], rows: list[dict]) -> list[dict]:
    """The runbooks.jsonl row each re-solve followed, found by the id it carries (`meta["runbook"]`), never by its
    place in the list, so the pairing holds for any order or subset. A re-solve recorded before the id was carried
    is matched by its guidance message instead: the runbook as it was shown (same task, same rendering)."""
    by_id, by_shown, out = {r["id"]: r for r in rows}, None, []
    for t in resolves:
        if "runbook" in t.meta:
            row = by_id.get(t.meta["runbook"])
        else:
            by_shown = by_shown or {(r["task"], render(r["runbook"])): r for r in reversed(rows)}  # first row wins
            shown = [m["content"] for m in t.messages if m["kind"] == "guidance"]
            row = by_shown.get((t.task, shown[0])) if len(shown) == 1 else None
        if row is None:
            raise ValueError(f"a re-solve of {t.task} (seed {t.seed}): no runbook of runbooks.jsonl has its id "
                             f"(meta['runbook'] = {t.meta.get('runbook')}) or is its guidance; remove resolves.jsonl "
                             "to re-solve again")
        out.append(row)
    return out


def accept(traj: Trajectory, runbook: dict, task) -> list[str]:
    """Why a re-solve is not kept (empty: keep): it failed, or its actions quote the runbook or the tests."""
    if not traj.verifier.get("strict"):
        return ["not a strict success"]
    actions = "\n".join(m["content"] for m in traj.messages if m["kind"] == "action")
    reasons = [f"leakage: {x}" for x in find_leaks(actions, task, allow_scripts=True)]
    quoted = ngrams(actions, 6) & (ngrams(render(runbook), 6) - ngrams(task.instruction, 6))
    if quoted:
        reasons.append(f"quotes the runbook: {' '.join(sorted(quoted)[0])!r}")
    return reasons


def build_dataset(tokenizer, trajs: list[Trajectory], source: str, per_task: int) -> tuple[list[Example], int]:
    """Step 5: clean examples, distinct and at most `per_task` per task; returns them and the retokenize failures."""
    out, seen, count, bad = [], set(), {}, 0
    for t in trajs:
        ex = build_example(tokenizer, t, source)
        if ex is None:
            continue
        if not ex.retokenizes:
            bad += 1
            continue
        key = tuple(ex.input_ids)
        if key in seen or count.get(ex.task, 0) >= per_task:
            continue
        seen.add(key)
        count[ex.task] = count.get(ex.task, 0) + 1
        out.append(ex)
    return out, bad


# ---------------------------------------------------------------- the stage

def kept_resolves(d: Path, resolves: list[Trajectory] | None = None) -> list[Trajectory]:
    """A stage's re-solves (`resolves`, else its resolves.jsonl) as the gate sees them: each cut after its passing
    prefix where `prefixes.json` (written only when the stage cuts) says so. flags.json and the acceptance read
    them by their index here."""
    resolves = read_trajectories(d / "resolves.jsonl") if resolves is None else resolves
    cuts = StageDir(d).read("prefixes.json", {})
    return [cut_after(t, cuts[str(i)]) if str(i) in cuts else t for i, t in enumerate(resolves)]


def run_rsr(run: Path, cycle: int, cfg: RSRConfig | None = None, *, policy=None, progress: bool = False,
            until: str | None = None, load=None) -> dict | None:
    """Run (or resume) the stage; return the funnel. `until="dataset"` stops once dataset.jsonl is written
    (scale_up trains it sharded, then a second call finds the checkpoint and finishes the stage). The model
    is loaded only when a step still needs it: `load(init, model)` where given (scale_up's rewrite job: a policy
    that may only generate, e.g. served by vLLM), else `load_actor` in `cfg.dtype`. The SFT step needs a
    trainable model: a policy served by vLLM is refused there."""
    from ..tasks import load_task

    stage = rsr_dir(run, cycle)
    d = stage.path
    d.mkdir(parents=True, exist_ok=True)
    cfg = stage.config(cfg, RSRConfig)
    if stage.done:
        return stage.read("funnel.json")
    loaded = [policy]

    def actor():
        if loaded[0] is None:
            loaded[0] = (load(cfg.init, cfg.model) if load is not None
                         else load_actor(cfg.init, model=cfg.model, dtype=cfg.dtype))
        return loaded[0]

    tasks = pool_tasks(run, cfg)

    if not (d / "discovery.jsonl").is_file():
        discover(actor(), tasks, cfg, d / "discovery.jsonl", progress)
    found = read_trajectories(d / "discovery.jsonl")
    if not (d / "successes.jsonl").is_file():
        write_trajectories(select_sources(found, cfg.max_sources_per_task), d / "successes.jsonl")
    sources = read_trajectories(d / "successes.jsonl")

    if not (d / "runbooks.jsonl").is_file():
        rows, planner = plan(actor(), sources, cfg)
        write_json_atomic(d / "model_planner.json", planner)
        write_jsonl_atomic(d / "runbooks.jsonl", rows)
    rows = read_jsonl(d / "runbooks.jsonl")
    if not (d / "reviews.jsonl").is_file():
        write_jsonl_atomic(d / "reviews.jsonl", review_all(actor() if cfg.model_reviewer else None, rows, cfg))
    verdicts = read_jsonl(d / "reviews.jsonl")

    if not (d / "resolves.jsonl").is_file():
        resolve(actor(), rows, verdicts, cfg, d / "resolves.jsonl", progress)
    resolves = read_trajectories(d / "resolves.jsonl")
    cutting = cfg.keep_passing_prefix or cfg.trim_after_pass
    if cutting and not (d / "prefixes.json").is_file():
        write_json_atomic(d / "prefixes.json", passing_prefixes(resolves, cfg.rollout.backend, cfg.rollout.workers,
                                                                failed=cfg.keep_passing_prefix,
                                                                trim=cfg.trim_after_pass))
    kept = kept_resolves(d, resolves)
    if cfg.shadow_gate and not (d / "flags.json").is_file():
        from ..verify.shadow import successes_flags

        write_json_atomic(d / "flags.json", {str(i): f for i, f in successes_flags(
            kept, backend=cfg.rollout.backend, workers=cfg.rollout.workers).items() if f})
    flags = stage.read("flags.json") if cfg.shadow_gate else {}
    accepted, rejected = [], {}
    for i, (t, row) in enumerate(zip(kept, runbooks_of(kept, rows))):
        why = accept(t, row["runbook"], load_task(Path(t.task_path)))
        if not why and str(i) in flags:  # a success that may be pretending: "flagged input_specific", ...
            why = [f"flagged {f}" for f in flags[str(i)]]
        if why:
            rejected[why[0].split(":")[0]] = rejected.get(why[0].split(":")[0], 0) + 1
        else:
            accepted.append(t)

    if not (d / "dataset.jsonl").is_file():
        examples, bad = build_dataset(actor().tokenizer, accepted, "resolve", cfg.max_examples_per_task)
        write_json_atomic(d / "dataset_meta.json", {"retokenize_failures": bad})
        write_jsonl_atomic(d / "dataset.jsonl", [e.to_dict() for e in examples])
    examples = [Example.from_dict(r) for r in read_jsonl(d / "dataset.jsonl")]
    if until == "dataset":
        return None

    if not (d / "checkpoint" / "adapter_config.json").is_file():
        from ..policy.gen.dispatch import generation_only

        if generation_only(actor()):
            raise ValueError(f"{d}: the SFT step needs a trainable model, and this stage's policy is served by vLLM "
                             "or remote servers (generation only); run it with until='dataset', or load the actor "
                             "with load_actor")
        summary = train_sft(actor(), examples, cfg.sft, metrics_path=d / "metrics.jsonl", progress=progress)
        write_json_atomic(d / "sft.json", summary)
        save_actor(actor(), d / "checkpoint")
    funnel = {
        "source_successes": len(sources), "discovery_episodes": len(found),
        "discovery_successes": sum(bool(t.verifier.get("strict")) for t in found),
        "tasks_solved": len({t.task for t in sources}), "pool_tasks": len(tasks),
        "retry_episodes": sum(t.seed >= cfg.discovery_samples for t in found),
        "retry_successes": sum(t.seed >= cfg.discovery_samples and bool(t.verifier.get("strict")) for t in found),
        "by_harness": {h: sum(bool(t.verifier.get("strict")) for t in found if t.harness == h)
                       for h in cfg.discovery_harnesses},
        "runbooks": len(rows), "runbooks_by_planner": {p: sum(r["planner"] == p for r in rows)
                                                       for p in ("model", "extractive")},
        "model_planner": stage.read("model_planner.json"),
        "approved": sum(v["approved"] for v in verdicts), "resolves": len(resolves),
        "resolve_successes": sum(bool(t.verifier.get("strict")) for t in resolves),
        "accepted": len(accepted), "rejected": rejected,
        "flagged": {k: sum(k in f for f in flags.values()) for k in sorted({k for f in flags.values() for k in f})},
        "accepted_prefixes": sum(t.finish_reason == "passing_prefix" for t in accepted),
        "trimmed_successes": sum(k.finish_reason == "passing_prefix" and bool(r.verifier.get("strict"))
                                 for r, k in zip(resolves, kept)),
        "retokenize_failures": stage.read("dataset_meta.json")["retokenize_failures"],
        "examples": len(examples), "training_tokens": sum(sum(e.loss_mask) for e in examples),
        "sft": stage.read("sft.json"),
    }
    stage.write("funnel.json", funnel)
    stage.mark_done()
    return funnel


FUNNEL_ROWS = [("source_successes", "source successes (strict, kept)"), ("runbooks", "runbooks"),
               ("approved", "approved by the reviewer"), ("resolves", "guided re-solves"),
               ("accepted", "accepted re-solves"), ("examples", "clean training examples"),
               ("training_tokens", "training tokens (loss mask)")]


def funnel_table(funnel: dict) -> str:
    """The funnel as lines, like the paper's 2,001 successes -> 11,094 trajectories."""
    lines = [f"{label:34} {funnel[key]:>7}" for key, label in FUNNEL_ROWS]
    mp = funnel.get("model_planner") or {}
    if mp.get("sampled"):
        lines.append(f"{'model planner schema-pass rate':34} {mp['valid']:>3}/{mp['sampled']}")
    for kind, n in (funnel.get("flagged") or {}).items():  # successes that may be pretending, kept out
        lines.append(f"{'  flagged ' + kind:34} {n:>7}")
    return "\n".join(lines)


def run_discovery_ablation(run: Path, cycle: int, *, progress: bool = False) -> dict:
    """The ablation: SFT straight on the stripped discovery successes (no runbook, no re-solve)."""
    src, stage = rsr_dir(run, cycle), rsr_dir(run, cycle, "-ablation")
    d = stage.path
    d.mkdir(parents=True, exist_ok=True)
    cfg = RSRConfig.from_dict(src.read("config.json"))
    if stage.done:
        return stage.read("summary.json")
    if not (src / "successes.jsonl").is_file():
        raise FileNotFoundError(f"{src}/successes.jsonl: run the RSR stage's discovery first")
    policy = load_actor(cfg.init, model=cfg.model, dtype=cfg.dtype)
    found = read_trajectories(src / "discovery.jsonl")
    examples, bad = build_dataset(policy.tokenizer, [t for t in found if t.verifier.get("strict")], "discovery",
                                  cfg.max_examples_per_task)
    write_jsonl_atomic(d / "dataset.jsonl", [e.to_dict() for e in examples])
    summary = train_sft(policy, examples, cfg.sft, metrics_path=d / "metrics.jsonl", progress=progress)
    save_actor(policy, d / "checkpoint")
    summary = {"examples": len(examples), "retokenize_failures": bad,
               "training_tokens": sum(sum(e.loss_mask) for e in examples), "sft": summary}
    stage.write("summary.json", summary)
    stage.mark_done()
    return summary
