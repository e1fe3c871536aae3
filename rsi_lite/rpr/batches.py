"""Which episodes each part of an RPR stage rolls out: the schedule of steps, the batch of step k (the
frontier rule reading the verdicts already on disk, or the paper's uniform draw), and the probes of the pool
with the figures they give. Pure but for reading the stage's finished trajectory files, so a resumed `run_rpr`
draws the same batches as the run it continues.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

from ..records import read_json
from ..rollout.trajectory import Trajectory
from ..rundir import StageDir
from .frontier import draw_batch, draw_by_kind

if TYPE_CHECKING:
    from .config import RPRConfig

def schedule(cfg: "RPRConfig") -> list[tuple[str, int]]:
    """The stage's steps in order: ('warmup', i), ('calibration', i), ('joint', i). A stage that inherits its
    critic (`critic_from`) has no warm-up: the paper warms a fresh critic up once, on the RSR-1 actor, and RPR-2
    inherits it and starts with the critic-only calibration steps (as scale_up's verl cycle does)."""
    n_warm = max(1, -(-cfg.warmup_tasks // cfg.batch_tasks)) if cfg.warmup_tasks and not cfg.critic_from else 0
    return ([("warmup", i) for i in range(n_warm)] + [("calibration", i) for i in range(cfg.calibration_steps)]
            + [("joint", i) for i in range(cfg.steps)])


def warmup_split(cfg: "RPRConfig", tasks: list) -> tuple[list, list]:
    """(the critic warm-up's tasks, the training tasks): a fixed shuffle of the pool by `cfg.seed`, its first
    `warmup_tasks` for the warm-up and the rest for training (all of it where nothing is left). Pure: the stage's
    batches and the task rows of a verl run (`scale_up.cycle`) split the pool the same way."""
    order = tasks[:]
    random.Random(cfg.seed).shuffle(order)
    return order[:cfg.warmup_tasks], order[cfg.warmup_tasks:] or order


def step_batches(cfg: "RPRConfig", tasks: list) -> list[tuple[str, list]]:
    """The uniform rule's (phase, tasks) for every step: warm-up tasks first, then the training tasks in turn
    (`warmup_split`). Pure, so a sharded run cuts the same batches."""
    warm, train = warmup_split(cfg, tasks)
    out = []
    for k, (phase, i) in enumerate(schedule(cfg)):
        if phase == "warmup":
            out.append((phase, warm[i * cfg.batch_tasks:(i + 1) * cfg.batch_tasks]))
        else:
            j = (k * cfg.batch_tasks) % len(train)
            out.append((phase, (train[j:] + train[:j])[:cfg.batch_tasks]))
    return out


PROBE_SEED = 900_000
"""Episode seeds of the probes (the same at every probe: two probes differ only by the actor's weights)."""


def probe_points(cfg: "RPRConfig") -> list[int]:
    """The step indices a probe runs before: 0, after every `probe_every` joint steps, and the end."""
    if cfg.probe_samples <= 0:
        return []
    plan = schedule(cfg)
    first_joint = next((k for k, (p, _) in enumerate(plan) if p == "joint"), len(plan))
    every = [first_joint + j for j in range(cfg.probe_every, cfg.steps, cfg.probe_every)] if cfg.probe_every else []
    return sorted({0, *every, len(plan)})


def probe_jobs(cfg: "RPRConfig", tasks: list, learnable: list[str] = ()) -> list[tuple]:
    """Up to `probe_tasks` pool tasks, evenly spaced through the pool, `probe_samples` episodes each; then the
    episodes that bring each of the `learnable` kinds to `probe_kind_episodes` (`kind_topup`)."""
    n = min(len(tasks), cfg.probe_tasks)
    chosen = [tasks[round(i * len(tasks) / n)] for i in range(n)] if n else []
    return [(t, PROBE_SEED + s) for s in range(cfg.probe_samples) for t in chosen] + kind_topup(cfg, chosen, learnable)


def kind_topup(cfg: "RPRConfig", chosen: list, learnable: list[str]) -> list[tuple]:
    """More episodes of the probe tasks of each `learnable` kind, with the seeds after `probe_samples`', until the
    kind has at least `cfg.probe_kind_episodes` (its tasks take turns, so none has more than one episode more than
    another)."""
    if not learnable:
        return []
    kinds = kind_map(chosen)
    out = []
    for kind in sorted(learnable):
        of = [t for t in chosen if kinds[t.name] == kind]
        if not of:
            continue
        per_task = -(-cfg.probe_kind_episodes // len(of))  # every task the same count: the rounds of seeds below
        out += [(t, PROBE_SEED + s) for s in range(cfg.probe_samples, per_task) for t in of]
    return out


def probe_kinds(trajs: list[Trajectory], kinds: dict[str, str]) -> list[str]:
    """The kinds a probe's episodes found learnable (solved in some, not all), sorted."""
    return sorted(solved_sometimes(probe_row(trajs, 0, kinds)["by_kind"]))


def history(d: Path, before: int) -> list[tuple[str, int]]:
    """Every (task, strict) verdict of the finished probes and steps that come before step `before`, in the
    order they ran (probe K runs before step K)."""
    from ..rollout.trajectory import read_trajectories

    stage = StageDir(d)
    parts = [(p.number, 0, p) for p in stage.finished("probe")] + [(p.number, 1, p) for p in stage.finished("step")]
    out = []
    for k, is_step, part in sorted(parts):
        if k < before or (k == before and not is_step):
            out += [(t.task, int(bool(t.verifier.get("strict")))) for t in read_trajectories(part / "trajectories.jsonl")]
    return out


def kind_map(tasks: list) -> dict[str, str]:
    """Every task's kind (`tasks.spec.task_kind`)."""
    from ..tasks.spec import task_kind

    return {t.name: task_kind(t.family, t.difficulty, t.instruction) for t in tasks}


def held_out(cfg: "RPRConfig", tasks: list) -> set[str]:
    """The probe tasks, which the kind rule never trains on: its probes measure the kinds on unseen instances."""
    return {t.name for t, _ in probe_jobs(cfg, tasks)} if cfg.batch_rule == "kinds" else set()


def uniform_batch(cfg: "RPRConfig", tasks: list, d: Path, k: int, kinds: dict[str, str] | None) -> tuple[list[str], dict]:
    """The paper's rule: step k's tasks of a fixed shuffle of the pool (`step_batches`); no verdict is read."""
    return [t.name for t in step_batches(cfg, tasks)[k][1]], {"rule": "uniform"}


def frontier_batch(cfg: "RPRConfig", tasks: list, d: Path, k: int, kinds: dict[str, str] | None) -> tuple[list[str], dict]:
    """Tasks the actor solves sometimes, by their last `cfg.window` verdicts before step k (`frontier.draw_batch`)."""
    rng = random.Random(f"batch/{cfg.seed}/{k}")
    return draw_batch([t.name for t in tasks], history(d, k), cfg.batch_tasks, rng, window=cfg.window,
                      explore=cfg.explore)


def kinds_batch(cfg: "RPRConfig", tasks: list, d: Path, k: int, kinds: dict[str, str] | None) -> tuple[list[str], dict]:
    """Distinct tasks of the kinds the actor solves sometimes, by each kind's last `cfg.kind_window` verdicts before
    step k, the probe tasks held out (`frontier.draw_by_kind`)."""
    rng = random.Random(f"batch/{cfg.seed}/{k}")
    hold = held_out(cfg, tasks)
    return draw_by_kind([t.name for t in tasks if t.name not in hold], kinds or kind_map(tasks), history(d, k),
                        cfg.batch_tasks, rng, window=cfg.kind_window, explore=cfg.explore)


BATCH_RULES = {"frontier": frontier_batch, "kinds": kinds_batch, "uniform": uniform_batch}
"""Every batch rule by the name `RPRConfig.batch_rule` knows it by. Each is called as `f(cfg, tasks, d, k, kinds)`
(the stage's directory `d`, whose verdicts before step k it may read; `kinds` the tasks' `kind_map` or None) and
returns step k's task names and what the draw saw (`info["rule"]`: the rule it drew by)."""


def batch_rule(cfg: "RPRConfig"):
    """The batch rule `cfg.batch_rule` names (`BATCH_RULES`)."""
    try:
        return BATCH_RULES[cfg.batch_rule]
    except KeyError:
        raise ValueError(f"RPRConfig.batch_rule: {cfg.batch_rule!r} is not one of {', '.join(BATCH_RULES)}") from None


def step_jobs(cfg: "RPRConfig", tasks: list, d: Path, k: int,
              kinds: dict[str, str] | None = None) -> tuple[str, list[tuple], dict]:
    """Step k's phase, its rollout jobs (task, episode seed) and what the draw saw. The frontier rules read the
    verdicts of the probes and steps before k from `d`: the same batch however the step is run. `kinds`: the
    tasks' `kind_map`, when the caller already has it."""
    phase = schedule(cfg)[k][0]
    names, info = batch_rule(cfg)(cfg, tasks, d, k, kinds)
    by_name = {t.name: t for t in tasks}
    r = cfg.rollouts_per_task
    jobs = [(by_name[n], 1000 * k + r * j + i) for j, n in enumerate(names) for i in range(r)]
    return phase, jobs, {**info, "tasks": len(set(names))}


def probe_row(trajs: list[Trajectory], before: int, kinds: dict[str, str] | None = None) -> dict:
    """A probe's figures: the pool's success rate, and each task's (and, given `kinds`, each kind's) successes
    and episodes."""
    by_task: dict[str, list[int]] = {}
    for t in trajs:
        by_task.setdefault(t.task, []).append(int(bool(t.verifier.get("strict"))))
    by_kind: dict[str, list[int]] = {}
    for name, v in by_task.items():
        got = by_kind.setdefault((kinds or {}).get(name, "?"), [0, 0])
        got[0], got[1] = got[0] + sum(v), got[1] + len(v)
    return {"before_step": before, "episodes": len(trajs),
            "pool_success": sum(map(sum, by_task.values())) / max(1, len(trajs)),
            "tasks": len(by_task), "tasks_solved": sum(any(v) for v in by_task.values()),
            "tasks_learnable": sum(0 < sum(v) < len(v) for v in by_task.values()),
            "by_task": {name: [sum(v), len(v)] for name, v in sorted(by_task.items())},
            **({"by_kind": dict(sorted(by_kind.items()))} if kinds else {})}


def solved_sometimes(counts: dict[str, list[int]]) -> list[str]:
    """The keys (tasks or kinds) of a probe's `[successes, episodes]` counts solved in some episodes, not all."""
    return [key for key, (s, e) in counts.items() if 0 < s < e]


def probe_curves(probes: list[dict]) -> dict:
    """Success per probe on the whole probed pool and on the tasks the first probe found learnable (the frontier
    PPO starts on; the same tasks and seeds in every probe)."""
    if not probes:
        return {}
    first = set(solved_sometimes(probes[0]["by_task"]))

    def rate(p, names):
        got = [p["by_task"][n] for n in names if n in p["by_task"]]
        return sum(s for s, _ in got) / max(1, sum(e for _, e in got)) if got else None

    out = {"before_step": [p["before_step"] for p in probes], "pool_success": [p["pool_success"] for p in probes],
           "first_frontier_tasks": len(first), "first_frontier_success": [rate(p, first) for p in probes]}
    if "by_kind" in probes[0]:  # the kinds the first probe found learnable, on the same held-out tasks each time
        front = solved_sometimes(probes[0]["by_kind"])
        out["first_frontier_kinds"] = len(front)
        out["first_frontier_kinds_success"] = [
            sum(p["by_kind"].get(k, [0, 0])[0] for k in front) / max(1, sum(p["by_kind"].get(k, [0, 0])[1] for k in front))
            for p in probes]
        out["by_kind"] = {k: [p["by_kind"].get(k, [0, 0]) for p in probes] for k in probes[0]["by_kind"]}
    return out



def first_frontier_kinds(d: Path, tasks: list) -> list[str]:
    """The kinds the first probe of the stage in `d` found learnable (solved in some of their episodes, not all):
    fixed before any training step."""
    probe = StageDir(d).probe(0) / "metrics.json"
    if not probe.is_file():
        raise FileNotFoundError(f"{probe}: missing (the stage's first probe has not run)")
    first = read_json(probe)
    if "by_kind" not in first:
        from ..rollout.trajectory import read_trajectories

        first = probe_row(read_trajectories(probe.parent / "trajectories.jsonl"), 0, kind_map(tasks))
    return sorted(solved_sometimes(first["by_kind"]))


def write_heldout(stage: Path, out: Path, per_kind: int, min_episodes: int = 0, runs: int = 1) -> dict[str, str]:
    """Fresh instances of the kinds the first probe of the RPR stage in `stage` found learnable, `per_kind` of each
    or more where `min_episodes` needs them (each task evaluated `runs` times: at least `min_episodes` episodes in
    all, `heldout_per_kind`), written to `out` by `write_kind_suite`; returns {task name: kind}, empty (and nothing
    written) when no kind was learnable. Measures whether what PPO learned on a kind carries to instances it never
    trained on."""
    from ..tasks.suites import pool_tasks
    from .config import RPRConfig

    stage = Path(stage)
    cfg = RPRConfig.from_dict(read_json(stage / "config.json"))
    kinds = first_frontier_kinds(stage, pool_tasks(stage.parent, cfg))
    if not kinds:
        return {}
    return write_kind_suite(kinds, out, heldout_per_kind(per_kind, min_episodes, len(kinds), runs), {"stage": str(stage)})


def heldout_per_kind(per_kind: int, min_episodes: int, kinds: int, runs: int) -> int:
    """Instances of each of `kinds` kinds: `per_kind`, or as many more as `min_episodes` episodes need when every
    task is run `runs` times (a held-out measurement sized to the gain it must tell: 200 episodes for 10 points)."""
    return max(per_kind, -(-min_episodes // max(1, kinds * runs)))


def write_kind_suite(kinds: list[str], out: Path, per_kind: int, meta: dict | None = None) -> dict[str, str]:
    """`per_kind` fresh instances of each of `kinds` (pool seeds no pool uses, none equal to an eval task), written
    to `out` as a suite (atomically) with `kinds.json` beside its tasks (`meta` added to it); returns
    {task name: kind}."""
    from ..records import atomic_dir, write_json_atomic
    from ..tasks.spec import task_kind, write_task
    from ..tasks.suites import eval_fingerprints, kind_specs

    made = {}
    with atomic_dir(Path(out)) as tmp:
        for name, seed, spec in kind_specs(set(kinds), per_kind, exclude=eval_fingerprints()):
            write_task(spec, tmp / name, suite="heldout", seed=seed)
            made[name] = task_kind(spec.family, spec.difficulty, spec.instruction)
        write_json_atomic(tmp / "kinds.json", {**(meta or {}), "per_kind": per_kind, "kinds": sorted(kinds),
                                               "tasks": made})
    return made
