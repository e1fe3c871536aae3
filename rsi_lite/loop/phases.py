"""The five-phase loop: Base -> RSR-1 -> RPR-1 -> RSR-2 -> RPR-2, evaluated after each phase.

One command (`rsi-lite run --profile tiny|cpu|gpu --out DIR`) runs the phases in order.
Each phase is a stage of its own module (`rsr.stage.run_rsr`, `rpr.run_rpr`) reading and
writing its own directory, so the loop only decides three things:

- where each stage starts: the checkpoint *retained* after the previous phase;
- which checkpoint is retained: after every training phase the new checkpoint and the
  incoming one are compared on the `val` suite (success, then process reward; a tie keeps
  the new one, since training is what the method does). The evaluation suites are never
  looked at for this; the paper chose by watching its test suites and we do not.
- what the controls run: direct PPO from Base, an RPR-2 branch with a reset critic, and
  an RPR-2 branch on FDR, each from the same start as the main branch.

Files in DIR (a run with several seeds has one such directory per seed, DIR/seed-S/,
sharing DIR/eval-base/ since Base does not depend on the training seed):

    run.json            the profile (every stage's config) and seeds, fixed at the first start, and the controls
    pool/               the training pool, shared by both cycles
    rsr-N/ rpr-N/       the stages' own files;  control-direct-ppo/, rpr-2-critic-reset/, rpr-2-fdr/
    heldout-rpr-N/      with `EvalConfig.heldout_per_kind`: kinds.json, tasks/ (fresh instances of the kinds RPR-N's
                        first probe found learnable), eval-<stage>/ for its incoming checkpoint and its actor
    eval-<stage>/       results.json, trajectories.jsonl, results.html, DONE
    eval-floor/         floor.json: what doing nothing scores on the same tasks (verifiers on untouched workspaces)
    selection.json      per phase: the candidates' val figures, which was retained and why
    cost.json           per stage: generated tokens, sandbox seconds, wall seconds (the time the process ran:
                        `paused_s`, the time it stood stopped, is beside it), CPU seconds (`cpu_s`: the process's
                        threads, its waited-for children, the machine's; `cpu_share`: the machine's over the wall,
                        2.0 = two cores busy throughout, or for a stage that stood stopped a while the process's and
                        its children's, since the machine's then holds what ran in the pause;
                        `loop.cost.cpu_seconds`), peak memory, and where the wall went (`breakdown`: model loading, generation,
                        idle slots, updates; see `timing`)
    report.json .md .html   written by `rsi-lite report DIR` (and at the end of the run)
    DONE

`--cycles 1` stops after RPR-1 (its held-out and `val` evaluations, and the direct-PPO control if named):
cycle one of a second training seed at half the cost of the five phases. `--resume --cycles 2`
later extends such a run to the five phases: cycle one's stages are kept and cycle two (with any
control named) starts from its selection.

Resuming (`--resume`) skips every finished stage (its DONE exists) and continues inside the
unfinished one; every file is written to a temp name and renamed, DONE last. `touch DIR/STOP`
stops a run at the next stage boundary (`rundir.stop_if_asked`): nothing is left half-done. A control named
with `--resume` is added to the run: `rsi-lite run --out DIR --resume --control direct-ppo` on
a finished run runs that branch (and its evaluation) and nothing else; the run's DONE is
removed until the branch has finished.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..policy.actor import load_actor
from ..records import read_json, read_jsonl, write_json_atomic
from ..rpr.config import RPRConfig
from ..rpr.replay import replay_source
from ..rpr.stage import run_rpr
from ..rsr.config import RSRConfig
from ..rsr.stage import run_rsr
from ..rundir import StageDir, inherited_critic, rpr_actor, rpr_dir, rsr_checkpoint, rsr_dir, seed_dir, stop_if_asked
from .cost import CostBook
from .profiles import EvalConfig, Profile, check_gpu_profile, profile

STAGES = ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
"""The main branch's phases, in order: the rows of the stage table."""
CONTROLS = {"direct-ppo": ("Direct PPO", "control-direct-ppo"),
            "critic-reset": ("RPR-2, critic reset", "rpr-2-critic-reset"),
            "reward-fdr": ("RPR-2, FDR", "rpr-2-fdr")}
"""Control flag -> (row label, stage directory)."""


def eval_dir(run: Path, stage: str, base: Path | None = None) -> Path:
    """`eval-base`, `eval-rsr-1`, ..., `eval-rpr-2-fdr`: a stage label's evaluation directory. Base's is `base`
    where given: seeds share one (DIR/eval-base) since Base does not depend on the training seed."""
    if stage == "Base" and base is not None:
        return Path(base)
    slug = {label: d for label, d in CONTROLS.values()}.get(stage, stage.lower())
    return Path(run) / f"eval-{slug}"


# ---------------------------------------------------------------- evaluation

def run_eval(d: Path, checkpoint: str, cfg: EvalConfig, model: str, progress: bool = False, load=None) -> dict:
    """`checkpoint` evaluated into `d`; the policy is `load(checkpoint, model)` (scale_up's eval job: bfloat16 or
    vLLM-served, `scale_up.loading`), else `load_actor`'s float32, loaded only if the evaluation has to run."""
    from ..eval.evaluate import evaluate

    stage = StageDir(d)
    if stage.done:
        return stage.read("results.json")
    policy = load(checkpoint, model) if load is not None else load_actor(checkpoint, model=model)
    doc = evaluate(policy, cfg.suites, d, k=cfg.k, rollout=cfg.rollout, checkpoint=checkpoint, limit=cfg.limit,
                   spread=True, progress=progress)
    stage.mark_done()
    return doc


def run_floor(d: Path, cfg: EvalConfig) -> dict:
    """What doing nothing scores on the evaluated tasks (`evaluate.floor`): the stage table's floor row."""
    from ..eval.evaluate import floor

    stage = StageDir(d)
    if stage.done:
        return stage.read("floor.json")
    doc = floor(cfg.suites, d, limit=cfg.limit, spread=True, backend=cfg.rollout.backend, workers=cfg.rollout.workers)
    stage.mark_done()
    return doc


def val_key(doc: dict, where: str = "results.json") -> tuple[float, float]:
    """(val success, val process reward) of an evaluation's results: what selection compares, in that order.
    A document without them is an error naming `where` (its file) and the missing field."""
    v = doc.get("suites", {}).get("val") if isinstance(doc, dict) else None
    if not isinstance(v, dict):
        raise ValueError(f"{where}: suites.val missing (the evaluation did not run the val suite, on which "
                         "checkpoints are selected: EvalConfig.suites must name it)")
    for f in ("success", "process_reward"):
        if not isinstance(v.get(f), (int, float)) or isinstance(v.get(f), bool):
            raise ValueError(f"{where}: suites.val.{f} is {v.get(f)!r}, expected a number")
    return v["success"], v["process_reward"]


def keeps_incoming(incoming: dict, new: dict) -> bool:
    """The selection rule on two evaluations (results.json): the incoming checkpoint stays only when it is strictly
    better on `val` (success, then process reward); a tie keeps the new one, since training is what the method does."""
    return val_key(incoming) > val_key(new)


def retained_after(stages: list[str], docs: dict[str, dict]) -> list[str]:
    """The stage retained after each training phase of `stages` (Base first, in the loop's order; `docs` each
    stage's results.json): `Loop.select` in turn, each phase against what the one before retained, which is also
    where the next phase starts. `retained_after(STAGES, docs)[-1]` is the run's final checkpoint."""
    kept, out = stages[0], []
    for new in stages[1:]:
        kept = kept if keeps_incoming(docs[kept], docs[new]) else new
        out.append(kept)
    return out


def select_on_val(d: Path, phase: str, incoming: tuple[str, str], new: tuple[str, str],
                  base_eval: Path | None = None, log=print) -> tuple[str, str]:
    """The loop's selection after a training phase: of the (stage label, checkpoint) pairs `incoming` (what the
    phase started from) and `new` (what it made), keep the better on val: success, then process reward; a tie
    keeps the new one, since training is what the method does. Reads each pair's evaluation
    (`eval_dir(d, label, base_eval)/results.json`), records the figures, the choice and why under `phase` in
    d/selection.json (atomically), and returns the retained pair; a phase already recorded there is read back,
    not decided again, so a resumed run keeps its choice. `scale_up.cycle` calls it on a 27B run's files."""
    selection = StageDir(d).read("selection.json", {})
    if phase not in selection:
        docs, keys = {}, {}
        for s, _ in (incoming, new):
            path = eval_dir(d, s, base_eval) / "results.json"
            if not StageDir(path.parent).done:
                raise FileNotFoundError(f"{path.parent}/DONE: missing ({s} is not evaluated yet; selecting "
                                        f"after {phase} needs both candidates' val figures)")
            docs[s] = read_json(path)
            keys[s] = val_key(docs[s], str(path))
        a, b = keys[incoming[0]], keys[new[0]]
        keep = incoming if keeps_incoming(docs[incoming[0]], docs[new[0]]) else new
        why = (f"val success {100 * b[0]:.1f}% vs {100 * a[0]:.1f}%, process reward {b[1]:.3f} vs {a[1]:.3f}: "
               + (f"{incoming[0]} is better, kept" if keep is incoming else f"{new[0]} is not worse, kept"))
        selection[phase] = {
            "candidates": {s: {"checkpoint": c, "val_success": keys[s][0], "val_process_reward": keys[s][1],
                               "val_tasks": docs[s]["suites"]["val"].get("n_tasks"), "k": docs[s].get("k")}
                           for s, c in (incoming, new)},
            "retained": keep[0], "checkpoint": keep[1], "why": why}
        write_json_atomic(Path(d) / "selection.json", selection)
    r = selection[phase]
    log(f"[{phase}] retained {r['retained']}: {r['why']}")
    return r["retained"], r["checkpoint"]


# ---------------------------------------------------------------- the loop

class LocalStages:
    """Runs every stage in this process (the laptop): `Loop` calls these three methods, and another runner may
    offer the same three on the same files. At scale the phases run as verl jobs instead (`python -m
    scale_up.cycle`, scale_up/README.md), on the same run-directory files."""

    def rsr(self, run: Path, cycle: int, cfg: RSRConfig, progress: bool):
        return run_rsr(run, cycle, cfg, progress=progress)

    def rpr(self, run: Path, cycle: int, cfg: RPRConfig, name: str, progress: bool):
        return run_rpr(run, cycle, cfg, progress=progress, name=name)

    def eval(self, d: Path, checkpoint: str, cfg: EvalConfig, model: str, progress: bool):
        return run_eval(d, checkpoint, cfg, model, progress)


def rpr_config(p: Profile, seed: int, init: str, critic: str, *, actor_lr: float | None = None,
               reward: str | None = None, steps: int | None = None) -> RPRConfig:
    """An RPR phase's config in a run of profile `p` (before `Loop.rpr` decides the replay term's source): the
    profile's recipe, started from `init` with the critic `critic` ("" fresh), at the run's seed."""
    cfg = RPRConfig.from_dict(p.rpr.to_dict())
    cfg.init, cfg.critic_from, cfg.model, cfg.seed = init, critic, p.model, seed
    cfg.actor_lr = actor_lr or cfg.actor_lr
    cfg.reward = reward or cfg.reward
    cfg.steps = steps or cfg.steps
    return cfg


def control_branches(p: Profile, rpr2_init: str | None, inherited: str) -> dict[str, dict]:
    """Where each control starts (`Loop.rpr`'s arguments): direct PPO from Base for as many joint steps as RPR-1 and
    RPR-2 together (run on its own: `rsi-lite rpr --from base --config configs/rpr-direct-ppo-cpu.json` is the `cpu`
    profile's), the other two from RPR-2's start with a fresh critic or on FDR."""
    return {"direct-ppo": dict(cycle=1, init="base", critic="", steps=2 * p.rpr.steps),
            "critic-reset": dict(cycle=2, init=rpr2_init, critic="", actor_lr=p.rpr2_actor_lr),
            "reward-fdr": dict(cycle=2, init=rpr2_init, critic=inherited, actor_lr=p.rpr2_actor_lr, reward="fdr")}


class Loop:
    """One seed's run in `self.dir`; `go()` runs (or resumes) every phase."""

    def __init__(self, d: Path, p: Profile, *, seed: int = 0, controls: tuple[str, ...] = (), cycles: int = 2,
                 base_eval: Path | None = None, progress: bool = False, log=print, stages=None):
        self.dir, self.p, self.seed, self.controls, self.cycles = Path(d), p, seed, tuple(controls), cycles
        self.stages = stages or LocalStages()
        self.base_eval = base_eval or self.dir / "eval-base"
        self.progress, self.log = progress, log
        self.book = CostBook(self.dir / "cost.json")

    def _timed(self, name: str, d: Path, fn):
        """Run one stage through the run's cost book (`cost.CostBook.timed`); `touch RUN/STOP` (or RUN/seed-S/STOP)
        stops the run before a stage that is still to run."""
        if not StageDir(d).done:
            stop_if_asked([self.dir, self.base_eval.parent], name, self.log)
        return self.book.timed(name, d, fn)

    def evaluate(self, stage: str, checkpoint: str) -> dict:
        d = eval_dir(self.dir, stage, self.base_eval)
        self.log(f"[{stage}] evaluate {checkpoint} on {', '.join(self.p.eval.suites)}")
        return self._timed(f"eval {stage}", d, lambda: self.stages.eval(d, checkpoint, self.p.eval, self.p.model,
                                                                      self.progress))

    def floor(self) -> None:
        """The floor row: the evaluated tasks' verifiers on untouched workspaces (seeds share it, as Base). It
        needs only the sandbox; where that fails the run goes on and the report leaves the row out."""
        d = self.base_eval.with_name("eval-floor")
        if not StageDir(d).done:
            self.log("[floor] what doing nothing scores on the evaluated tasks")
        try:
            self._timed("floor", d, lambda: run_floor(d, self.p.eval))
        except Exception as e:  # noqa: BLE001 -- a measurement beside the run, never a reason to stop it
            self.log(f"[floor] not measured: {type(e).__name__}: {e}")

    def select(self, phase: str, incoming: tuple[str, str], new: tuple[str, str]) -> tuple[str, str]:
        """Keep the better of (stage, checkpoint) pairs on val (`select_on_val`)."""
        return select_on_val(self.dir, phase, incoming, new, self.base_eval, self.log)

    def rsr(self, cycle: int, init: str) -> str:
        cfg = RSRConfig.from_dict(self.p.rsr.to_dict())
        cfg.init, cfg.model = init, self.p.model
        cfg.rollout.seed, cfg.sft.seed = 1000 * self.seed + cycle, self.seed
        self.log(f"[RSR-{cycle}] self-rewrite from {init}")
        d = rsr_dir(self.dir, cycle).path
        self._timed(f"RSR-{cycle}", d, lambda: self.stages.rsr(self.dir, cycle, cfg, self.progress))
        return str(rsr_checkpoint(self.dir, cycle))

    def rpr(self, label: str, name: str, cycle: int, init: str, critic: str, *, actor_lr: float | None = None,
            reward: str | None = None, steps: int | None = None) -> str:
        cfg = rpr_config(self.p, self.seed, init, critic, actor_lr=actor_lr, reward=reward, steps=steps)
        if cfg.replay:
            from ..rpr.replay import replay_path

            src = replay_source(init)
            if not src:
                self.log(f"[{label}] no self-rewrite behind {init}: the replay term is off for this phase")
                cfg.replay = 0.0
            elif Path(src) != replay_path(cfg):  # only where it differs from the default beside `init`
                cfg.replay_from = src
        self.log(f"[{label}] PPO from {init}, critic {'from ' + critic if critic else 'fresh'}, reward {cfg.reward}"
                 + (f", replay {cfg.replay} by {cfg.replay_by}" if cfg.replay else ""))
        d = rpr_dir(self.dir, cycle, name).path
        self._timed(label, d, lambda: self.stages.rpr(self.dir, cycle, cfg, name, self.progress))
        return str(rpr_actor(self.dir, cycle, name))

    def heldout(self, label: str, name: str, incoming: tuple[str, str], ck: str) -> None:
        """The RPR phase's incoming checkpoint and its actor on fresh instances of the kinds its first probe found
        learnable (`EvalConfig.heldout_per_kind`): DIR/heldout-rpr-N/{tasks,eval-<stage>}."""
        from ..eval.evaluate import suite_k
        from ..rpr.batches import write_heldout

        n = self.p.eval.heldout_per_kind
        d = self.dir / f"heldout-{name}"
        if not n:
            return
        if not (d / "kinds.json").is_file():
            k, least = suite_k(self.p.eval.k, "core"), self.p.eval.heldout_min_episodes
            made = write_heldout(self.dir / name, d / "tasks", n, least, k)
            per_kind = StageDir(d / "tasks").read("kinds.json")["per_kind"] if made else n
            write_json_atomic(d / "kinds.json", {"per_kind": per_kind, "tasks": made})
        if not StageDir(d).read("kinds.json")["tasks"]:
            self.log(f"[{label}] held-out kinds: its first probe found no kind learnable; nothing to measure")
            return
        cfg = EvalConfig(suites=[str(d / "tasks")], k=suite_k(self.p.eval.k, "core"), rollout=self.p.eval.rollout)
        for stage, c in (incoming, (label, ck)):
            e = d / f"eval-{stage.lower()}"
            self.log(f"[{label}] held-out kinds: evaluate {stage} ({c})")
            self._timed(f"heldout {label}: {stage}", e, lambda: self.stages.eval(e, c, cfg, self.p.model, self.progress))

    def go(self) -> dict:
        from ..tasks.suites import ensure_pool

        self.dir.mkdir(parents=True, exist_ok=True)
        self.p.rsr.pool = self.p.rpr.pool = str(ensure_pool(self.dir, self.p.pool_size))

        self.evaluate("Base", "base")
        self.floor()
        kept = ("Base", "base")
        stages = {"Base": "base"}
        rpr2_init = None
        for cycle in range(1, self.cycles + 1):
            ck = self.rsr(cycle, kept[1])
            stages[f"RSR-{cycle}"] = ck
            self.evaluate(f"RSR-{cycle}", ck)
            kept = self.select(f"RSR-{cycle}", kept, (f"RSR-{cycle}", ck))
            critic = inherited_critic(self.dir, cycle)
            lr = self.p.rpr2_actor_lr if cycle == 2 else None
            if cycle == 2:
                rpr2_init = kept[1]
            ck = self.rpr(f"RPR-{cycle}", f"rpr-{cycle}", cycle, kept[1], critic, actor_lr=lr)
            stages[f"RPR-{cycle}"] = ck
            self.heldout(f"RPR-{cycle}", f"rpr-{cycle}", kept, ck)
            self.evaluate(f"RPR-{cycle}", ck)
            kept = self.select(f"RPR-{cycle}", kept, (f"RPR-{cycle}", ck))
        # the controls start where their main-branch counterpart started; they never change what is retained
        branches = control_branches(self.p, rpr2_init, inherited_critic(self.dir, 2))
        for c in self.controls:
            label, name = CONTROLS[c]
            ck = self.rpr(label, name, **branches[c])
            stages[label] = ck
            self.evaluate(label, ck)
        doc = {"stages": stages, "retained": kept[0], "final_checkpoint": kept[1], "controls": list(self.controls),
               "cycles": self.cycles}
        write_json_atomic(self.dir / "result.json", doc)
        StageDir(self.dir).mark_done()
        return doc


def _check_cycles(cycles: int, controls, where) -> None:
    if cycles not in (1, 2):
        raise ValueError(f"{where}: cycles {cycles}: expected 1 (Base, RSR-1, RPR-1) or 2 (the five phases)")
    two = [c for c in controls if c in ("critic-reset", "reward-fdr")]
    if cycles == 1 and two:
        raise ValueError(f"{where}: cycles 1: the control(s) {two} branch from RPR-2's start, which a run of one "
                         f"cycle never reaches")


def _unfinish(out: Path, seeds) -> None:
    """The run is no longer finished: every seed's DONE goes (its stages' DONE files stay)."""
    for s in seeds:
        StageDir(seed_dir(out, seeds, s)).unmark()


def start(out: Path, name: str, *, resume: bool = False, controls=(), seeds=(0,), cycles: int | None = None,
          progress=False, log=print, p: Profile | None = None, stages=None, report_to: str | None = None) -> dict:
    """Start (or, with `resume`, continue) a run in `out`; return what each seed retained. `report_to`
    ('tensorboard') and `cycles` (2, the five phases; 1 stops after RPR-1, e.g. for a second training seed
    of cycle one) are fixed with the profile at the first start, like every other stage setting."""
    out = Path(out).absolute()  # the stages' configs name their inputs by path: the same from any directory
    bad = [c for c in controls if c not in CONTROLS]
    if bad:
        raise ValueError(f"controls {bad}: expected some of {list(CONTROLS)}")
    run_json = out / "run.json"
    if run_json.is_file():
        if not resume:
            raise FileExistsError(f"{run_json}: a run is already here; add --resume to continue it, or use a new --out")
        saved = read_json(run_json)
        p, seeds = Profile.from_dict(saved["profile"]), tuple(saved["seeds"])
        was = saved.get("cycles", 2)
        if cycles == 2 and was == 1:  # a finished cycle one is kept: only RSR-2 onwards (and the controls) run
            log(f"extending {out} to the five phases: cycle one's stages are kept, cycle two runs from its selection")
            saved = {**saved, "cycles": 2}
            write_json_atomic(run_json, saved)
            _unfinish(out, seeds)
        elif cycles is not None and cycles != was:
            log(f"--cycles {cycles} ignored: {out} keeps the two cycles it started with")
        cycles = saved.get("cycles", 2)
        _check_cycles(cycles, controls, run_json)
        # a control named now is added to the run (it is an extra branch: the main one is not redone)
        added = [c for c in controls if c not in saved["controls"]]
        controls = tuple(saved["controls"]) + tuple(added)
        if report_to and report_to != p.rpr.report_to:
            log(f"--report-to {report_to} ignored: {out} keeps the setting it started with ({p.rpr.report_to})")
        if added:
            log(f"adding control(s) {', '.join(added)} to {out}")
            write_json_atomic(run_json, {**saved, "controls": list(controls)})
            _unfinish(out, seeds)  # until its new branches have finished
    else:
        if out.is_dir() and any(out.iterdir()):
            raise FileExistsError(f"{out}: not empty and not a run (no run.json); use a new --out")
        p = p or profile(name)
        if report_to:
            p.rsr.sft.report_to = p.rpr.report_to = report_to
        cycles = 2 if cycles is None else cycles
        _check_cycles(cycles, controls, "--cycles")
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(run_json, {"profile": p.to_dict(), "controls": list(controls), "seeds": list(seeds),
                                     "cycles": cycles, "started": time.strftime("%Y-%m-%dT%H:%M:%S")})
    if p.name == "gpu" and stages is None:
        check_gpu_profile(p)
    t0 = time.monotonic()
    results = {}
    for s in seeds:
        d = seed_dir(out, seeds, s)
        if len(seeds) > 1:
            log(f"== seed {s} ({d})")
        results[s] = Loop(d, Profile.from_dict(p.to_dict()), seed=s, controls=controls, cycles=cycles,
                          base_eval=out / "eval-base", progress=progress, log=log, stages=stages).go()
    done = {"wall_s_this_attempt": round(time.monotonic() - t0, 1), "seeds": list(seeds)}
    write_json_atomic(out / "finished.json", done)
    return results


def read_stage_metrics(d: Path) -> list[dict]:
    """An RPR stage's per-step metrics (also while it runs: from the finished step directories)."""
    if (d / "metrics.jsonl").is_file():
        return read_jsonl(d / "metrics.jsonl")
    return [s.read("metrics.json") for s in StageDir(d).finished()]
