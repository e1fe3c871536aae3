"""Does refinement learn? PPO (critic, TB-GAE, SPR, the paper's clip) and a critic-free control, each trained from one
self-rewrite checkpoint on the kinds it solves sometimes, measured on fresh instances of those kinds before and after.

    python -m rsi_lite.bench.learns --config configs/learns.json --out runs/learns

What it does, in order, each part resumable (a part with its DONE is never run again; a killed one reruns whole;
`touch OUT/STOP` stops the benchmark before its next part):

    start/          the starting checkpoint: the self-rewrite of `start` (an RSRConfig) from Base, made once and
                    reused by every method and seed (`rsi_lite.rsr.stage.run_rsr`; the wall the issue counts
                    leaves it out); or, with `--start RUN/rsr-1`, a loop's RSR-1 of the same recipe, adopted
                    (start/adopted.json: its path and the seeds it differs in)
    pool/           the training pool (`pool_size` generated tasks)
    kinds/          the starting checkpoint's probe: `probe_tasks` pool tasks x `probe_samples` episodes at the
                    training rollout settings; the kinds solved in some episodes and not all are "learnable",
                    fixed here, before any training, as the loop's first probe fixes them
    heldout/        fresh instances of those kinds (pool seeds no pool uses), enough that a measurement holds at
                    least `min_episodes` episodes (`samples` episodes of each task)
    before-tT/      the starting checkpoint on heldout/ at each of `temperatures` (the same episode seeds as after)
    M-sS/rpr-1/     method M (an RPRConfig: `methods[M]`) from the starting checkpoint with training seed S, on the
                    pool's tasks of the learnable kinds (`RPRConfig.pool_kinds`)
    M-sS/after-tT/  its actor on heldout/ at each temperature
    cost.json       every attempt's wall of every part (a resumed part's wall is the sum of its attempts), less
                    the seconds the process stood stopped, which `paused:PART` keeps
    results.json, results.md

The figures (`compare`): per method, seed and temperature, the change in held-out success with a 95% interval
from a paired bootstrap over tasks (`paired_bootstrap`: a task's before and after success are resampled
together, and the `samples` episodes of a task are never counted as independent), each kind's change with its
own interval, and at temperature 0.6 also the change on the kinds with room (incoming success at most `room`).
The verdicts the issue asks for (`verdicts`): each seed's gain outside its interval at the training temperature
and on the kinds with room at 0.6, against `targets`, and no kind falling by more than its interval.
"""

from __future__ import annotations

import argparse
import json
import signal
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..eval.paired import compare, paired_bootstrap, task_rates  # noqa: F401 (paired_bootstrap: part of this API)
from ..records import write_json_atomic
from ..rollout.engine import RolloutConfig
from ..rundir import StageDir, stop_if_asked
from ..timing import Stopwatch
from .learns_table import markdown, seed_means, verdicts

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "learns.json"


@dataclass
class LearnsConfig:
    """The benchmark's settings (`configs/learns.json`)."""

    start: dict | str = field(default_factory=dict)
    """The self-rewrite that makes the starting checkpoint (from Base): RSRConfig fields, or the path of a JSON file
    of them (relative to this config's directory)."""
    pool_size: int = 1200
    """Generated pool tasks (then filtered by `pool_difficulty`, `pool_families`, and for training by the kinds)."""
    pool_difficulty: list[str] = field(default_factory=list)
    pool_families: list[str] = field(default_factory=list)
    probe_tasks: int = 96
    """Pool tasks of the probe that fixes the learnable kinds (evenly spaced through the filtered pool)."""
    probe_samples: int = 4
    """Episodes of each probed task."""
    heldout_per_kind: int = 10
    """At least this many fresh instances of each learnable kind; more where `min_episodes` needs them."""
    samples: int = 3
    """Episodes of each held-out task per measurement (episode seeds 0..samples-1, the same before and after)."""
    min_episodes: int = 200
    """Episodes a measurement holds at least (kinds x per_kind x samples)."""
    temperatures: list[float] = field(default_factory=lambda: [1.0, 0.6])
    """Measurement temperatures: the first is the training temperature."""
    room: float = 0.7
    """At the other temperatures, the kinds "with room" are those whose incoming success is at most this."""
    targets: dict = field(default_factory=lambda: {"train": 0.20, "room": 0.10})
    """Gains the issue asks for: at the training temperature, and on the kinds with room at the others."""
    seeds: list[int] = field(default_factory=lambda: [0, 1])
    """Training seeds (`RPRConfig.seed`)."""
    methods: dict = field(default_factory=dict)
    """Method name -> RPRConfig fields (`init`, `pool`, `pool_kinds` and `seed` are the benchmark's to set)."""
    rollout: dict = field(default_factory=lambda: {"harness": "plain", "temperature": 1.0, "max_turns": 3,
                                                   "max_new_tokens": 64})
    """RolloutConfig fields of training, probe and measurement (the measurement's temperature aside)."""
    resamples: int = 4000
    """Bootstrap resamples."""

    @classmethod
    def load(cls, path: Path) -> "LearnsConfig":
        """The config at `path`; an unknown or mistyped field is an error naming the file and the field."""
        path = Path(path)
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: not a readable JSON file ({e})") from None
        known = cls.__dataclass_fields__
        for key, value in doc.items():
            if key not in known:
                raise ValueError(f"{path}: unknown field {key!r} (known: {', '.join(known)})")
            default = getattr(cls(), key)
            if key == "start" and isinstance(value, str):
                try:
                    doc[key] = json.loads((path.parent / value).read_text())
                except (OSError, json.JSONDecodeError) as e:
                    raise ValueError(f"{path}: field 'start': {path.parent / value} is not a readable JSON file "
                                     f"({e})") from None
                continue
            if type(default) is not type(value) and not (isinstance(default, float) and isinstance(value, int)):
                raise ValueError(f"{path}: field {key!r} should be a {type(default).__name__}, "
                                 f"not {type(value).__name__}")
        cfg = cls(**doc)
        if not cfg.methods:
            raise ValueError(f"{path}: field 'methods' names no method")
        if not cfg.temperatures:
            raise ValueError(f"{path}: field 'temperatures' is empty")
        from ..rpr.config import RPRConfig
        from ..rsr.config import RSRConfig

        for name, fields in cfg.methods.items():
            try:
                RPRConfig.from_dict(fields)
            except (TypeError, ValueError) as e:
                raise ValueError(f"{path}: methods.{name}: {e}") from None
        try:
            RSRConfig.from_dict(cfg.start)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: start: {e}") from None
        return cfg

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------- the parts (each resumable)

class Bench:
    """The benchmark in `out` with config `cfg`; `go()` runs (or resumes) every part."""

    def __init__(self, out: Path, cfg: LearnsConfig, *, log=print, progress: bool = False):
        self.out, self.cfg, self.log, self.progress = Path(out), cfg, log, progress
        self.cost = StageDir(self.out).read("cost.json", {})

    # -- bookkeeping
    def timed(self, name: str, fn):
        """Run one part and add this attempt's wall to cost.json, also when it is interrupted (SIGTERM included):
        a resumed part's wall is the sum of its attempts. `touch OUT/STOP` stops the benchmark before a part."""
        stop_if_asked([self.out], name, self.log)
        sw = Stopwatch()
        try:
            return fn()
        finally:
            # the seconds the process stood stopped (`kill -STOP`, to run something else on the cores) are not the
            # part's: they are left out of its wall and kept beside it, as the loop's cost book does
            wall, paused = sw.read()
            self.cost.setdefault(name, []).append(round(wall, 1))
            if paused > 0:
                self.cost.setdefault(f"paused:{name}", []).append(round(paused, 1))
            write_json_atomic(self.out / "cost.json", self.cost)

    def wall(self, *names: str) -> float:
        return round(sum(sum(self.cost.get(n, [])) for n in names), 1)

    def rollout(self, temperature: float | None = None) -> RolloutConfig:
        d = dict(self.cfg.rollout)
        if temperature is not None:
            d["temperature"] = temperature
        return RolloutConfig(**d)

    # -- parts
    def start(self, adopt: Path | None = None) -> str:
        """The starting checkpoint (the self-rewrite of `cfg.start` from Base), made once; or `adopt`, a finished
        RSR-1 stage of the same recipe made elsewhere (a loop's `rsr-1`: `adopt_start`), recorded in
        start/adopted.json and used from then on."""
        from ..rsr.config import RSRConfig
        from ..rsr.stage import run_rsr

        d = self.out / "start"
        ckpt = d / "rsr-1" / "checkpoint"
        adopted = StageDir(d).read("adopted.json", None)
        if adopt is not None and adopted is not None and Path(adopted["stage"]) != Path(adopt).resolve():
            raise SystemExit(f"--start {adopt}: {d / 'adopted.json'} already adopted {adopted['stage']}; a benchmark "
                             "has one starting checkpoint (another needs another --out)")
        if adopt is not None and adopted is None and StageDir(d / "rsr-1").done:
            raise SystemExit(f"--start {adopt}: this benchmark made its own starting checkpoint ({d / 'rsr-1'}); "
                             "another needs another --out")
        if adopted is None and adopt is not None:
            adopted = adopt_start(Path(adopt), RSRConfig.from_dict(self.cfg.start))
            write_json_atomic(d / "adopted.json", adopted)
            self.log(f"[start] adopted {adopted['stage']} as the starting checkpoint")
        if adopted is not None:
            return adopted["checkpoint"]
        if not StageDir(d / "rsr-1").done:
            self.log(f"[start] the self-rewrite that makes the starting checkpoint ({d / 'rsr-1'})")
            self.timed("start", lambda: run_rsr(d, 1, RSRConfig.from_dict(self.cfg.start), progress=self.progress))
        return str(ckpt)

    def pool(self) -> list:
        """The generated pool's tasks of `pool_difficulty` and `pool_families` (all kinds)."""
        from types import SimpleNamespace

        from ..tasks.suites import pool_tasks

        return pool_tasks(self.out, SimpleNamespace(pool="", pool_size=self.cfg.pool_size,
                                                    pool_difficulty=self.cfg.pool_difficulty,
                                                    pool_families=self.cfg.pool_families))

    def kinds(self, ckpt: str) -> list[str]:
        """The kinds the starting checkpoint solves sometimes, from its probe (fixed before any training)."""
        from ..policy.actor import load_actor
        from ..records import atomic_dir
        from ..rollout.engine import run_episodes
        from ..rollout.trajectory import write_trajectories
        from ..rpr.batches import kind_map, probe_jobs, probe_row, solved_sometimes

        d = StageDir(self.out / "kinds")
        if not d.done:
            tasks = self.pool()
            jobs = probe_jobs(self.cfg, tasks)  # the stage's probe rule: `probe_tasks` evenly spaced, `probe_samples` each
            self.log(f"[kinds] probe of the starting checkpoint: {len(jobs)} episodes")

            def probe():
                trajs = run_episodes(load_actor(ckpt), jobs, self.rollout(), policy_name="start:probe",
                                     progress=self.progress)
                row = probe_row(trajs, 0, kind_map(tasks))
                with atomic_dir(d.path) as tmp:
                    write_trajectories(trajs, tmp / "trajectories.jsonl")
                    StageDir(tmp).write("probe.json", {**row, "learnable": sorted(solved_sometimes(row["by_kind"]))})
                    StageDir(tmp).mark_done()

            self.timed("kinds", probe)
        return d.read("probe.json")["learnable"]

    def heldout(self, kinds: list[str]) -> dict[str, str]:
        from ..rpr.batches import heldout_per_kind, write_kind_suite

        d = StageDir(self.out / "heldout")
        if not (d / "kinds.json").is_file():
            per = heldout_per_kind(self.cfg.heldout_per_kind, self.cfg.min_episodes, len(kinds), self.cfg.samples)
            self.log(f"[heldout] {per} fresh instances of each of {len(kinds)} kinds")
            self.timed("heldout", lambda: write_kind_suite(kinds, d.path, per, {"from": "kinds/probe.json"}))
        return d.read("kinds.json")["tasks"]

    def measure(self, name: str, ckpt: str, temperature: float) -> Path:
        """`ckpt` on heldout/ at `temperature`, `samples` episodes a task, into OUT/NAME (resumable)."""
        from ..eval.evaluate import evaluate
        from ..policy.actor import load_actor

        d = self.out / name
        if not StageDir(d).done:
            self.log(f"[{name}] {ckpt} on the held-out kinds at temperature {temperature}")

            def run():
                evaluate(load_actor(ckpt), [str(self.out / "heldout")], d, k=self.cfg.samples,
                         rollout=self.rollout(temperature), checkpoint=ckpt, shadow=False, progress=self.progress)
                StageDir(d).mark_done()

            self.timed(name, run)
        return d

    def train(self, method: str, seed: int, ckpt: str, kinds: list[str]) -> str:
        from ..rpr.config import RPRConfig
        from ..rpr.stage import run_rpr

        run = self.out / f"{method}-s{seed}"
        cfg = RPRConfig.from_dict({**self.cfg.methods[method], "init": ckpt, "pool": str(self.out / "pool"),
                                   "pool_difficulty": self.cfg.pool_difficulty, "pool_families": self.cfg.pool_families,
                                   "pool_kinds": kinds, "seed": seed, "rollout": self.cfg.rollout})
        if not StageDir(run / "rpr-1").done:
            self.log(f"[{method}-s{seed}] refinement: {cfg.estimator}, {cfg.steps} joint steps")
            self.timed(f"{method}-s{seed}/train", lambda: run_rpr(run, 1, cfg, progress=self.progress))
        return str(run / "rpr-1" / "actor")

    # -- the whole benchmark
    def go(self, methods: list[str] | None = None, seeds: list[int] | None = None, adopt: Path | None = None) -> dict:
        self.out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.out / "config.json", self.cfg.to_dict())
        ckpt = self.start(adopt)
        kinds = self.kinds(ckpt)
        if not kinds:
            raise RuntimeError(f"{self.out / 'kinds' / 'probe.json'}: the starting checkpoint solves no kind "
                               "sometimes: nothing for refinement to learn (a stronger self-rewrite is needed)")
        self.heldout(kinds)
        temps = self.cfg.temperatures
        for T in temps:
            self.measure(f"before-t{T}", ckpt, T)
        for seed in seeds if seeds is not None else self.cfg.seeds:
            for method in methods or list(self.cfg.methods):
                actor = self.train(method, seed, ckpt, kinds)
                for T in temps:
                    self.measure(f"{method}-s{seed}/after-t{T}", actor, T)
        return self.results()

    def results(self) -> dict:
        """results.json and results.md from whatever parts are finished."""
        from ..rollout.trajectory import read_trajectories

        kinds = StageDir(self.out / "heldout").read("kinds.json")["tasks"]
        rates, episodes = {}, {}
        for d in [self.out / f"before-t{T}" for T in self.cfg.temperatures] + sorted(self.out.glob("*-s*/after-t*")):
            if StageDir(d).done:
                key = str(d.relative_to(self.out))
                trajs = read_trajectories(d / "trajectories.jsonl")
                rates[key], episodes[key] = task_rates(trajs, kinds), len(trajs)
        rows = []
        train_T = self.cfg.temperatures[0]
        for method in self.cfg.methods:
            for seed in self.cfg.seeds:
                for T in self.cfg.temperatures:
                    key = f"{method}-s{seed}/after-t{T}"
                    if key not in rates or f"before-t{T}" not in rates:
                        continue
                    cmp = compare(rates[f"before-t{T}"], rates[key], room=None if T == train_T else self.cfg.room,
                                  resamples=self.cfg.resamples, seed=seed)
                    rows.append({"method": method, "seed": seed, "temperature": T, **cmp,
                                 "verdict": verdicts(cmp, train=T == train_T, targets=self.cfg.targets),
                                 "episodes": episodes[key],
                                 "wall_s": self.wall(f"{method}-s{seed}/train",
                                                     *(f"{method}-s{seed}/after-t{t}" for t in self.cfg.temperatures))})
        doc = {"config": self.cfg.to_dict(), "kinds": StageDir(self.out / "kinds").read("probe.json")["learnable"],
               "heldout_tasks": len(kinds), "rows": rows, "means": seed_means(rows), "cost": self.cost}
        write_json_atomic(self.out / "results.json", doc)
        (self.out / "results.md").write_text(markdown(doc))
        return doc


ADOPT_MAY_DIFFER = ("pool", "rollout.seed", "sft.seed", "sft.report_to", "rollout.workers", "rollout.batch_size",
                    "rollout.backend", "rollout.engine", "rollout.generation_backend", "rollout.open_episodes",
                    "rollout.page_size")
"""What an adopted start may differ in from `start`: where its pool lives (its size is checked), its seeds (a loop's
RSR-1 takes them from the run's seed), where its logs went, and how its rollouts were scheduled and served (engines
whose greedy replies are identical, tested in tests/policy); not what it trained on or how."""


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def stage_pool(stage: Path, pool: str) -> Path:
    """The pool a stage's config names. A relative path is the one its run saw from the directory it was started in
    (`rsi-lite run --out runs/cpu` writes `runs/cpu/pool`), so it is looked for from here and then from each
    directory above the stage, the nearest first."""
    path = Path(pool)
    if path.is_absolute():
        return path
    return next((base / path for base in [Path.cwd(), *stage.parents] if (base / path).is_dir()), path)


def adopt_start(stage: Path, start) -> dict:
    """What `--start STAGE` records: a finished self-rewrite stage (DONE, checkpoint/, config.json) whose recipe is
    `start`'s (an RSRConfig) in every field but `ADOPT_MAY_DIFFER`; an error names the stage's file and the fields
    that differ otherwise."""
    from ..rsr.config import RSRConfig

    stage = stage.resolve()
    if not StageDir(stage).done or not (stage / "checkpoint").is_dir():
        raise SystemExit(f"--start {stage}: not a finished self-rewrite stage (DONE and checkpoint/ expected)")
    cfg_file = stage / "config.json"
    try:
        theirs = _flat(asdict(RSRConfig.from_dict(json.loads(cfg_file.read_text()))))
    except (OSError, ValueError, TypeError) as e:
        raise SystemExit(f"--start {stage}: {cfg_file} does not hold a self-rewrite config ({e})") from e
    ours = _flat(asdict(start))
    differ = {k: (ours.get(k), theirs.get(k)) for k in sorted(set(ours) | set(theirs))
              if ours.get(k) != theirs.get(k)}
    wrong = [k for k in differ if k not in ADOPT_MAY_DIFFER]
    if wrong:
        raise SystemExit(f"--start {stage}: {cfg_file} is not the benchmark's start recipe: "
                         + "; ".join(f"{k} is {differ[k][1]!r}, the config's {differ[k][0]!r}" for k in wrong))
    if theirs.get("pool"):  # a pool is generated from its size alone (`tasks.suites.pool_specs`): the same size, the same tasks
        from ..tasks.task import find_tasks

        pool = stage_pool(stage, theirs["pool"])
        if not pool.is_dir():
            raise SystemExit(f"--start {stage}: its pool {theirs['pool']} ({cfg_file}, field 'pool') is not a directory "
                             "here (a relative path is looked for from this directory and from each one above the stage)")
        held = len(find_tasks(pool))
        if held != start.pool_size:
            raise SystemExit(f"--start {stage}: its pool {pool} holds {held} tasks, the start recipe's "
                             f"pool_size is {start.pool_size}")
    return {"stage": str(stage), "checkpoint": str(stage / "checkpoint"),
            "differs": {k: {"config": a, "stage": b} for k, (a, b) in differ.items()}}


def _exit(signum, frame):
    """SIGTERM as an exception, so that the running part's `finally` records its attempt in cost.json."""
    raise SystemExit(128 + signum)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m rsi_lite.bench.learns", description=__doc__.split("\n")[0])
    ap.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    ap.add_argument("--out", type=Path, default=Path("runs/learns"))
    ap.add_argument("--methods", nargs="*", help="only these methods (default: all of the config's)")
    ap.add_argument("--seeds", nargs="*", type=int, help="only these training seeds (default: the config's)")
    ap.add_argument("--start", type=Path, help="a finished RSR-1 stage of the start recipe made elsewhere (a loop's "
                    "RUN/rsr-1), adopted as the starting checkpoint instead of making one")
    ap.add_argument("--results", action="store_true", help="only rewrite results.json and results.md")
    ap.add_argument("--progress", action="store_true")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _exit)
    cfg = LearnsConfig.load(a.config)
    if a.methods:
        unknown = [m for m in a.methods if m not in cfg.methods]
        if unknown:
            raise SystemExit(f"{a.config}: no method {', '.join(unknown)} (methods: {', '.join(cfg.methods)})")
    bench = Bench(a.out, cfg, progress=a.progress)
    doc = bench.results() if a.results else bench.go(a.methods, a.seeds, a.start)
    print(markdown(doc))


if __name__ == "__main__":
    main()
