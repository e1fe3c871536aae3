"""The checked-in evaluation suites and the on-demand training pool.

Each suite plays the role of one of the paper's benchmarks (see docs/paper.md):

    core     TB 2.1   the easiest: mostly one-command tasks, all nine training families
    hard     TB Hard  medium and hard instances of the same families
    multi    TB 3.0   two dependent steps from different families
    extreme  TB 4.0   three hard steps behind an archive: out of a 135M model's reach
    swr      SWR100   a family (permissions and links) that never appears in training
    lhtb     LHTB     repair a small broken project: layered bugs, hidden stress checks
    val      --       protected validation, used only to select checkpoints

Seeds are namespaced by suite (`core/0`, `train/17`, ...), so no two suites and no suite
and the pool share a seed; `audit.overlap_audit` then checks the content itself.
"""

from __future__ import annotations

import random
from pathlib import Path

from ..rundir import StageDir
from .composite import compose
from .families import DIFFICULTIES, FAMILIES, TRAIN_FAMILIES
from .spec import TaskSpec, write_task

SUITES = ("core", "hard", "multi", "extreme", "swr", "lhtb", "val")
EVAL_SUITES = ("core", "hard", "multi", "extreme", "swr", "lhtb")


def _per_family(difficulties: list[str]):
    return [(fam, d) for fam in TRAIN_FAMILIES for d in difficulties]


def _recipe(suite: str) -> list[tuple[str, str, dict]]:
    """(family, difficulty, compose-args) for every task of a suite, in order."""
    if suite == "core":
        return [(f, d, {}) for f, d in _per_family(["easy"] * 4 + ["medium"])]
    if suite == "hard":
        return [(f, d, {}) for f, d in _per_family(["medium", "medium", "hard", "hard"])]
    if suite == "val":
        return [(f, d, {}) for f, d in _per_family(["easy", "easy", "medium"])]
    if suite == "swr":
        return [("fs_meta", d, {}) for d in ["easy"] * 8 + ["medium"] * 7 + ["hard"] * 5]
    if suite == "lhtb":
        return [("project_repair", "long", {})] * 12
    if suite == "multi":
        return [("multi", "medium", {"n": 2, "levels": ("easy", "medium"), "packed": i % 2 == 1}) for i in range(24)]
    if suite == "extreme":
        return [("extreme", "extreme", {"n": 3, "levels": ("hard",), "packed": True}) for _ in range(20)]
    raise KeyError(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")


def make_spec(rng: random.Random, family: str, difficulty: str, **compose_args) -> TaskSpec:
    if family in FAMILIES:
        return FAMILIES[family].generate(rng, difficulty)
    fams = rng.sample(TRAIN_FAMILIES, compose_args["n"])
    parts = [(f, rng.choice(compose_args["levels"])) for f in fams]
    return compose(rng, parts, packed=compose_args["packed"], family=family, difficulty=difficulty)


def suite_specs(suite: str) -> list[tuple[str, str, TaskSpec]]:
    """(task name, seed, spec) for every task of `suite`; the same on every machine."""
    out = []
    for i, (family, difficulty, args) in enumerate(_recipe(suite)):
        seed = f"{suite}/{i}"
        spec = make_spec(random.Random(seed), family, difficulty, **args)
        out.append((f"{suite}-{i:03d}-{family}-{spec.difficulty}", seed, spec))
    return out


def write_suite(suite: str, root: Path) -> list[Path]:
    dest = Path(root) / suite
    written = [write_task(spec, dest / name, suite=suite, seed=seed) for name, seed, spec in suite_specs(suite)]
    keep = {p.name for p in written}
    for stale in dest.iterdir():
        if stale.is_dir() and stale.name not in keep:
            raise RuntimeError(f"{stale}: not produced by the generator; remove it by hand if it is stale")
    return written


def pool_specs(n: int = 360, *, exclude: set[str] = frozenset(), start: int = 0):
    """Yield (name, seed, spec) for a training pool of `n` tasks.

    Families cycle in order; difficulty is drawn easy/medium/hard at 50/30/20, and one task
    in ten is a two-step composite. A candidate whose fingerprint is in `exclude` (the eval
    suites') is skipped and the next seed tried, so the pool never contains an eval instance.
    """
    made, i = 0, start
    while made < n:
        seed = f"train/{i}"
        i += 1
        rng = random.Random(seed)
        if made % 10 == 9:
            spec = make_spec(rng, "multi", "medium", n=2, levels=("easy", "medium"), packed=rng.random() < 0.5)
        else:
            family = TRAIN_FAMILIES[made % len(TRAIN_FAMILIES)]
            spec = make_spec(rng, family, rng.choices(DIFFICULTIES, weights=[5, 3, 2])[0])
        if spec.fingerprint() in exclude:
            continue
        yield f"train-{made:04d}-{spec.family}-{spec.difficulty}", seed, spec
        made += 1


HELDOUT_START = 1_000_000
"""Seeds `train/1000000` on: never in a pool of fewer than a million candidates."""


def kind_specs(kinds: set[str], per_kind: int, *, exclude: set[str] = frozenset(), start: int = HELDOUT_START):
    """Yield (name, seed, spec): `per_kind` fresh instances of each of `kinds` (`tasks.spec.task_kind`), from pool
    seeds no pool uses, none equal to an instance in `exclude` (the eval suites'). A held-out set for a kind."""
    from .spec import task_kind

    left = dict.fromkeys(kinds, per_kind)
    for j, (_, seed, spec) in enumerate(pool_specs(400 * per_kind * max(1, len(kinds)), exclude=exclude, start=start)):
        kind = task_kind(spec.family, spec.difficulty, spec.instruction)
        if left.get(kind, 0) > 0:
            left[kind] -= 1
            yield f"heldout-{j:05d}-{spec.family}-{spec.difficulty}", seed, spec
            if not any(left.values()):
                return
    missing = {k: n for k, n in left.items() if n}
    if missing:
        raise ValueError(f"no generator makes enough instances of these kinds: {missing}")


def eval_fingerprints() -> set[str]:
    return {spec.fingerprint() for suite in SUITES for _, _, spec in suite_specs(suite)}


def write_pool(dest: Path, n: int = 360) -> list[Path]:
    """Generate the training pool into `dest` (default tasks_pool/, ignored by git)."""
    exclude = eval_fingerprints()
    return [write_task(spec, Path(dest) / name, suite="train", seed=seed) for name, seed, spec in pool_specs(n, exclude=exclude)]


def ensure_pool(run: Path, n: int) -> Path:
    """RUN/pool: `n` generated pool tasks, written on first use (DONE once whole; the seeds of a run share it)."""
    pool = StageDir(Path(run) / "pool")
    if not pool.done:
        write_pool(pool.path, n)
        pool.mark_done()
    return pool.path


def pool_tasks(run: Path, cfg):
    """The training pool of a stage's config (`pool`, `pool_size`, and the optional `pool_difficulty`,
    `pool_families` and `pool_kinds` filters): the directory `cfg.pool`, else RUN/pool, written on first use."""
    from .task import find_tasks

    if cfg.pool:
        tasks = find_tasks(Path(cfg.pool))
        if not tasks:
            raise FileNotFoundError(f"pool: {cfg.pool} holds no tasks")
    else:
        tasks = find_tasks(ensure_pool(run, cfg.pool_size))
    difficulty, families = getattr(cfg, "pool_difficulty", None), getattr(cfg, "pool_families", None)
    kinds = set(getattr(cfg, "pool_kinds", None) or ())
    if kinds:
        from .spec import task_kind
    return [t for t in tasks if (not difficulty or t.difficulty in difficulty) and (not families or t.family in families)
            and (not kinds or task_kind(t.family, t.difficulty, t.instruction) in kinds)]
