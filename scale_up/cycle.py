"""The cycle at scale: Base -> RSR-1 -> RPR-1 -> RSR-2 -> RPR-2 as verl jobs in the kit's run directory, every
phase evaluated and selected on `val` as the CPU loop (`rsi_lite.loop.phases`) does.

    python -m scale_up.cycle --run RUN --model MODEL [--launcher slurm] [--steps 20] [--dry-run]

Each phase is a list of jobs run one after another. A job is a command (the kit's environment, verl's, or a
Slurm job of verl's) or a step done here; each gets a directory RUN/<phase>/jobs/<job>/ whose DONE is written
once it has finished. Started again after a kill, the cycle skips every finished job and runs the first
unfinished one again from its start: verl's own `trainer.resume_mode: auto` then resumes that job from its newest
`global_step_N`, and the kit's stages and evaluations continue from their own DONE files.

    base   tasks     verl's task rows from the kit's pool (`data.write_run_tasks`): RUN/tasks/train.parquet and
                     warmup.parquet (the pool split as the kit's RPR splits it), val.parquet (the val suite)
           eval      Base evaluated as the CPU loop evaluates every phase (`loop.phases.run_eval`: the run's
                     evaluation settings, the `gpu` profile's suites, k and temperature) -> RUN/eval-base/
           floor     the evaluated tasks' verifiers on untouched workspaces (`loop.phases.run_floor`) -> eval-floor/
    RSR-N  rewrite   the kit's self-rewrite up to rsr-N/dataset.jsonl (`run_rsr(until="dataset")`, the `gpu`
                     profile's settings in PPO's episode shape, the kit's environment; the policy served by verl's
                     vLLM replicas over the cluster, `serve`, or on one GPU, `scale_up.loading`) from the
                     checkpoint retained before it
           sft       verl's SFT trainer on it (configs/rsi_sft.yaml, `KitSFTDataset`)    -> RUN/verl/rsr-N/
           merge     verl's model merger on the newest step's actor                     -> RUN/verl/rsr-N/merged/
           export    the adapter into rsr-N/checkpoint/, verl's SFT metrics into rsr-N/sft.json
           finish    the kit's `run_rsr` again: it finds the checkpoint, writes funnel.json and DONE
           eval      RSR-N's checkpoint, as Base                                        -> RUN/eval-rsr-N/
           select    `loop.phases.select_on_val`: of the checkpoint retained before RSR-N and RSR-N's, the better
                     on val goes on (RUN/selection.json, as the CPU loop writes it)
    RPR-N  warmup    (cycle one) the critic warm-up, rsi_27b + warmup_overrides            -> RUN/verl/rpr-1-warmup/
           ppo       verl's PPO with the kit's TB-GAE (configs/rsi_27b.yaml) from the checkpoint retained after
                     RSR-N, the critic inherited from the warm-up (cycle one) or from RPR-(N-1)
                     (`trainer.rsi_critic_from`)
           merge     as above                                                           -> RUN/verl/rpr-N/merged/
           export    the adapter into rpr-N/actor/; each logged step into rpr-N/step-KKK/ (metrics.json, the
                     episodes as the kit's trajectories.jsonl, DONE), rpr-N/metrics.jsonl, summary.json, DONE
           eval      RPR-N's actor, as Base                                             -> RUN/eval-rpr-N/
           select    as after RSR-N

Where each phase starts is decided when it starts, from RUN/selection.json (`retained_before`): a checkpoint
worse on val than the one it was trained from is not carried forward, as in the CPU loop. So `rsi-lite report
RUN` shows the stage table, the selection, the funnels, the PPO curves and the reward shares as for a CPU run,
and `rsi-lite eval --checkpoint RUN/rpr-1/actor` evaluates an exported actor. The critic stays verl's (a
full-weight value model, configs/rsi_27b.yaml says why): rpr-N/critic.json names its checkpoint.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from rsi_lite.records import read_json, write_json_atomic
from rsi_lite.rundir import StageDir, rpr_dir, rsr_dir

from .export import export_rpr, export_rsr
from .settings import SERVE

REPO = Path(__file__).resolve().parents[1]
PHASES = ("base", "rsr-1", "rpr-1", "rsr-2", "rpr-2")
LABELS = {"base": "Base", "rsr-1": "RSR-1", "rpr-1": "RPR-1", "rsr-2": "RSR-2", "rpr-2": "RPR-2"}
"""Phase directory -> the stage label the CPU loop gives it (its eval-<stage>/ and selection.json's keys)."""


@dataclass
class CycleConfig:
    """What the cycle runs with; written to RUN/cycle.json at the first start and read back on a resume."""

    run: str
    """The run directory (on a filesystem every node sees)."""
    model: str
    """The base model: a local Hugging Face model directory."""
    launcher: str = "local"
    """'local': verl's jobs run here (`python -m scale_up.main`, torchrun for SFT); 'slurm': each verl job is
    `sbatch --wait scale_up/jobs/slurm.sbatch` (a Ray cluster over the allocation's nodes)."""
    steps: int = 20
    """PPO steps of each RPR phase (four critic-only, then joint: configs/rsi_27b.yaml)."""
    rpr2_actor_lr: float = 1e-6
    """RPR-2's actor learning rate (RPR-1's is the config's): the paper's ratio between the cycles at LoRA scale."""
    train_files: str = ""
    """Where the `tasks` job writes verl's PPO task rows: default RUN/tasks/train.parquet."""
    warmup_files: str = ""
    """Where it writes the critic warm-up's task rows: default RUN/tasks/warmup.parquet."""
    val_files: str = ""
    """Where it writes the val suite's rows (verl's `data.val_files`, which verl reads at every start even with
    its validation off): default RUN/tasks/val.parquet."""
    pool_size: int = 0
    """Tasks generated into RUN/pool; 0: the `gpu` profile's."""
    warmup_tasks: int = 0
    """Pool tasks set aside for the critic warm-up; 0: the `gpu` profile's RPR config's."""
    eval: dict = field(default_factory=dict)
    """`EvalConfig` fields over the `gpu` profile's evaluation (say {"limit": 20} for a cheaper one); the result
    is fixed in run.json (profile.eval) at the first start, so every phase is evaluated alike."""
    verl_python: str = ".venv-verl/bin/python"
    kit_python: str = ".venv/bin/python"
    nnodes: int = 4
    gpus_per_node: int = 8
    overrides: list = field(default_factory=list)
    """Further Hydra overrides for every verl PPO job."""
    serve: bool = SERVE
    """The kit's generation jobs (`rewrite`: discovery, re-solves, planner, reviewer; `evaluate`) on verl's
    standalone vLLM replicas over all `nnodes` x `gpus_per_node` GPUs (`scale_up.serve`, started and stopped by
    the job: `kit_jobs.serving`), the default: their episodes have PPO's shape (`settings.episode_fields`), and
    one sequence of the paper's 262,144-token context fits no single 80 or 141 GB GPU's cache beside the 27B
    weights (`python -m scale_up.memory`). False: on the driver node's one GPU (`scale_up.loading`), for a shorter
    `rsi.context_budget` in configs/rsi_27b.yaml."""

    def __post_init__(self):
        self.run = str(Path(self.run).absolute())
        self.train_files = self.train_files or f"{self.run}/tasks/train.parquet"
        self.warmup_files = self.warmup_files or f"{self.run}/tasks/warmup.parquet"
        self.val_files = self.val_files or f"{self.run}/tasks/val.parquet"

    @classmethod
    def read(cls, path: Path) -> "CycleConfig":
        """The config saved in `path` (cycle.json); a field it does not know is an error naming it."""
        d = read_json(path)
        if not isinstance(d, dict):
            raise ValueError(f"{path}: expected a JSON object of CycleConfig fields")
        known = {f.name for f in fields(cls)}
        if unknown := sorted(set(d) - known):
            raise ValueError(f"{path}: field(s) {', '.join(unknown)} are not CycleConfig fields "
                             f"({', '.join(sorted(known))})")
        if missing := [f for f in ("run", "model") if f not in d]:
            raise ValueError(f"{path}: field(s) {', '.join(missing)} missing")
        return cls(**d)


@dataclass
class Job:
    """One job of a phase: `argv` run by the launcher (`env` says which environment: 'kit', 'verl', or
    'cluster' for a verl job that needs the GPUs), or, with `argv` empty ('here'), the step `name` done in this
    process with `args`."""

    phase: str
    name: str
    argv: list = field(default_factory=list)
    env: str = "verl"
    verl_dir: str = ""
    """The verl run this job writes or reads (its `default_local_dir`)."""
    args: dict = field(default_factory=dict)
    """A step done here: what it is given (the select step's candidates)."""

    def dir(self, run: str) -> StageDir:
        return StageDir(Path(run) / self.phase / "jobs" / self.name)

    def describe(self) -> str:
        what = shlex.join(self.argv) if self.argv else (f"(in this process: {self.name}"
                                                         + (f" from {self.verl_dir}" if self.verl_dir else "")
                                                         + (f" {json.dumps(self.args)}" if self.args else "") + ")")
        return f"[{self.phase} {self.name}, {self.env}] {what}"


# ---------------------------------------------------------------- where each phase starts

def retained_before(run: str | Path, phase: str) -> tuple[str, str] | None:
    """(stage label, checkpoint) a phase starts from, as the CPU loop decides it: Base for RSR-1, else what the
    previous phase's selection retained (RUN/selection.json); None while that selection is not made."""
    i = PHASES.index(phase)
    if i <= 1:
        return None if i == 0 else ("Base", "base")
    got = StageDir(Path(run)).read("selection.json", {}).get(LABELS[PHASES[i - 1]])
    return (got["retained"], got["checkpoint"]) if got else None


def pending(phase: str) -> tuple[str, str]:
    """What a plan shows for a start not decided yet (`plan_jobs` before the selection it waits on)."""
    prev = LABELS[PHASES[PHASES.index(phase) - 1]]
    return f"retained after {prev}", f"<the checkpoint retained after {prev}: RUN/selection.json>"


def new_checkpoint(run: str, phase: str) -> str:
    """The checkpoint a phase makes, where the kit's layout keeps it."""
    cycle = int(phase[-1])
    return str(rsr_dir(run, cycle) / "checkpoint" if phase.startswith("rsr") else rpr_dir(run, cycle) / "actor")


# ---------------------------------------------------------------- the jobs

WARMUP_OVERRIDES = ["trainer.critic_warmup=1000000000", "trainer.total_epochs=1", "trainer.rsi_critic_from=null"]
"""The critic warm-up as its own verl phase over rsi_27b.yaml (the paper: one epoch of the warm-up tasks with the
RSR-1 actor frozen, the critic learning values; RPR-1 then inherits this critic and runs its critic-only steps):
verl updates the actor once critic_warmup <= step, so out of reach it never does; one pass; a fresh critic.
Overrides, not a config file: Hydra takes `hydra.searchpath` (which rsi_27b.yaml needs for verl's defaults) only
from the primary config, so a file that included rsi_27b could not be composed
(tests/scale_up/test_config.py composes rsi_27b with these and runs verl's checks)."""


def warmup_overrides(cfg: CycleConfig) -> list[str]:
    """`WARMUP_OVERRIDES` and the warm-up's batch: all its task rows in one step where they are fewer than a PPO
    step's (`data.train_batch_size`, 256; the gpu profile sets 64 rows aside), else steps of that size; the critic
    trained on it as the kit's warm-up trains (`RPRConfig.minibatch` rows a mini-batch, `warmup_epochs` passes).
    verl's v1 trainer counts `rows // train_batch_size` steps an epoch (trainer_base.py) and divides by that count
    before its first step, so at 256 a warm-up of 64 rows stopped with a ZeroDivisionError and RPR-1 never got a
    critic to inherit; beyond 256, fewer than 256 rows go unused. The rows are those the `tasks` job wrote
    (RUN/tasks/tasks.json) once it has run, else the configured count. Applied after `cfg.overrides`, which
    cannot undo them."""
    from rsi_lite.loop.profiles import profile

    from .settings import read_config

    rpr = profile("gpu").rpr
    tasks_json = Path(cfg.run) / "tasks" / "tasks.json"
    written = read_json(tasks_json) if tasks_json.is_file() else {}
    rows = written.get("warmup", {}).get("rows") or cfg.warmup_tasks or rpr.warmup_tasks
    b = min(rows, read_config()["data"]["train_batch_size"])
    return [*WARMUP_OVERRIDES, f"data.train_batch_size={b}", f"actor_rollout_ref.actor.ppo_mini_batch_size={b}",
            f"critic.ppo_mini_batch_size={min(b, rpr.minibatch)}", f"critic.ppo_epochs={rpr.warmup_epochs}"]


def _verl_ppo(cfg: CycleConfig, config_name: str, experiment: str, overrides: list[str],
              last: list[str] = ()) -> list[str]:
    common = [f"--config-name={config_name}", f"trainer.experiment_name={experiment}",
              f"actor_rollout_ref.model.path={cfg.model}", f"data.val_files={cfg.val_files}", *overrides,
              *cfg.overrides, *last]
    if cfg.launcher == "slurm":  # the job script sets the nodes, the GPUs and default_local_dir from RUN
        return ["sbatch", "--wait", f"--nodes={cfg.nnodes}", str(REPO / "scale_up/jobs/slurm.sbatch"), *common]
    return [cfg.verl_python, "-m", "scale_up.main", *common, f"trainer.nnodes={cfg.nnodes}",
            f"trainer.n_gpus_per_node={cfg.gpus_per_node}", f"trainer.default_local_dir={cfg.run}/verl/{experiment}"]


def _merge(cfg: CycleConfig, phase: str, verl_dir: str) -> Job:
    return Job(phase, "merge", [cfg.verl_python, "-m", "scale_up.cycle", "merge", verl_dir, f"{verl_dir}/merged"],
               "verl", verl_dir)


def _evaluated(cfg: CycleConfig, phase: str, incoming: tuple[str, str]) -> list[Job]:
    """A training phase's last two jobs: its checkpoint evaluated (the kit's environment), then the selection."""
    label, ck = LABELS[phase], new_checkpoint(cfg.run, phase)
    return [Job(phase, "eval", [cfg.kit_python, "-m", "scale_up.cycle", "evaluate", cfg.run, label, ck], "kit"),
            Job(phase, "select", [], "here", args={"incoming": list(incoming), "new": [label, ck]})]


def base_jobs(cfg: CycleConfig) -> list[Job]:
    kit = [cfg.kit_python, "-m", "scale_up.cycle"]
    files = {"train": cfg.train_files, "warmup": cfg.warmup_files, "val": cfg.val_files}
    return [Job("base", "tasks", [], "here", args=files),
            Job("base", "eval", [*kit, "evaluate", cfg.run, "Base", "base"], "kit"),
            Job("base", "floor", [*kit, "floor", cfg.run], "kit")]


def rsr_jobs(cfg: CycleConfig, cycle: int, incoming: tuple[str, str]) -> list[Job]:
    """RSR-N's jobs, from `incoming` (stage label, checkpoint): the one retained before it."""
    phase, run, init = f"rsr-{cycle}", cfg.run, incoming[1]
    verl_dir = f"{run}/verl/{phase}"
    sft = ["--config-path", str(REPO / "scale_up/configs"), "--config-name", "rsi_sft",
           f"data.train_files={run}/{phase}/dataset.jsonl", f"model.path={cfg.model}",
           f"trainer.experiment_name={phase}", f"trainer.default_local_dir={verl_dir}",
           f"trainer.nnodes={cfg.nnodes}", f"trainer.n_gpus_per_node={cfg.gpus_per_node}"]
    if init != "base":
        sft.append(f"model.lora_adapter_path={init}")  # the retained adapter, continued
    torchrun = [cfg.verl_python, "-m", "torch.distributed.run", f"--nnodes={cfg.nnodes}",
                f"--nproc_per_node={cfg.gpus_per_node}", "-m", "verl.trainer.sft_trainer", *sft]
    if cfg.launcher == "slurm":
        torchrun = ["sbatch", "--wait", f"--nodes={cfg.nnodes}", "--export=ALL,RSI_ENTRY=sft",
                    str(REPO / "scale_up/jobs/slurm.sbatch"), *sft]
    kit = [cfg.kit_python, "-m", "scale_up.cycle"]
    return [Job(phase, "rewrite", [*kit, "rewrite", run, str(cycle), init, cfg.model], "kit"),
            Job(phase, "sft", torchrun, "cluster", verl_dir),
            _merge(cfg, phase, verl_dir),
            Job(phase, "export", [], "here", verl_dir),
            Job(phase, "finish", [*kit, "finish", run, str(cycle)], "kit"),
            *_evaluated(cfg, phase, incoming)]


def rpr_jobs(cfg: CycleConfig, cycle: int, incoming: tuple[str, str]) -> list[Job]:
    """RPR-N's jobs, from `incoming`: the checkpoint retained after RSR-N (a fresh LoRA actor where that is Base)."""
    phase, run = f"rpr-{cycle}", cfg.run
    verl_dir = f"{run}/verl/{phase}"
    actor = [] if incoming[1] == "base" else [f"actor_rollout_ref.model.lora_adapter_path={incoming[1]}"]
    jobs = []
    if cycle == 1:
        warm = f"{run}/verl/rpr-1-warmup"
        jobs.append(Job(phase, "warmup", _verl_ppo(cfg, "rsi_27b", "rpr-1-warmup",
                                                   [*actor, f"data.train_files={cfg.warmup_files}"],
                                                   warmup_overrides(cfg)),
                        "cluster", warm))
        critic = warm
    else:
        critic = f"{run}/verl/rpr-{cycle - 1}"
    ppo = [*actor, f"data.train_files={cfg.train_files}", f"trainer.total_training_steps={cfg.steps}",
           f"trainer.rsi_critic_from={critic}", f"trainer.rsi_trajectory_dir={run}/{phase}/verl-trajectories"]
    if cycle > 1:
        ppo.append(f"actor_rollout_ref.actor.optim.lr={cfg.rpr2_actor_lr}")
    return [*jobs, Job(phase, "ppo", _verl_ppo(cfg, "rsi_27b", phase, ppo), "cluster", verl_dir),
            _merge(cfg, phase, verl_dir), Job(phase, "export", [], "here", verl_dir),
            *_evaluated(cfg, phase, incoming)]


def phase_jobs(cfg: CycleConfig, phase: str, incoming: tuple[str, str] | None) -> list[Job]:
    if phase == "base":
        return base_jobs(cfg)
    return (rsr_jobs if phase.startswith("rsr") else rpr_jobs)(cfg, int(phase[-1]), incoming)


def plan_jobs(cfg: CycleConfig) -> list[Job]:
    """Every job of the cycle, in order; a phase whose start waits on a selection not made yet shows it as
    pending (`pending`). Reads RUN/selection.json where there is one, writes nothing."""
    return [j for phase in PHASES
            for j in phase_jobs(cfg, phase, retained_before(cfg.run, phase) or (None if phase == "base" else pending(phase)))]


# ---------------------------------------------------------------- the steps done here

def eval_settings(cfg: CycleConfig) -> dict:
    """The evaluation every phase gets: the `gpu` profile's `EvalConfig`, its episodes shaped as PPO's
    (`settings.episode_fields`: configs/rsi_27b.yaml's `rsi` section and `cfg.overrides`' rsi.* entries), with
    `cfg.eval`'s fields over it (an unknown field is an error naming it), as a dict for run.json."""
    from rsi_lite.loop.profiles import EvalConfig, profile

    from .settings import episode_fields

    base = asdict(profile("gpu").eval)
    if unknown := sorted(set(cfg.eval) - set(base)):
        raise ValueError(f"CycleConfig.eval: {', '.join(unknown)} are not EvalConfig fields ({', '.join(base)})")
    try:
        shape = episode_fields(overrides=cfg.overrides)
        ev = EvalConfig.from_dict({**base, **cfg.eval, "rollout": {**base["rollout"], **shape,
                                                                  **cfg.eval.get("rollout", {})}})
    except (TypeError, ValueError) as e:
        raise ValueError(f"CycleConfig.eval: {e}") from None
    if "val" not in ev.suites:
        raise ValueError(f"CycleConfig.eval.suites: {ev.suites} lacks 'val', on which checkpoints are selected")
    return asdict(ev)


def write_tasks(cfg: CycleConfig) -> dict:
    """The `tasks` job: verl's task rows from the kit's pool (`data.write_run_tasks`, the `gpu` profile's RPR
    config), recorded in RUN/tasks/tasks.json."""
    from rsi_lite.loop.profiles import profile

    from .data import write_run_tasks

    p = profile("gpu")
    rpr = p.rpr
    rpr.warmup_tasks = cfg.warmup_tasks or rpr.warmup_tasks
    out = write_run_tasks(cfg.run, cfg.train_files, cfg.warmup_files, cfg.val_files, rpr,
                          pool_size=cfg.pool_size or p.pool_size)
    write_json_atomic(Path(cfg.run) / "tasks" / "tasks.json", out)
    return out


def select(cfg: CycleConfig, job: Job, log=print) -> tuple[str, str]:
    """The `select` job: the CPU loop's own rule (`loop.phases.select_on_val`) on the two candidates' evaluations."""
    from rsi_lite.loop.phases import select_on_val

    return select_on_val(Path(cfg.run), LABELS[job.phase], tuple(job.args["incoming"]), tuple(job.args["new"]),
                         log=log)


def run_here(job: Job, cfg: CycleConfig, log=print) -> None:
    """A job without a command: done in this process."""
    if job.name == "tasks":
        write_tasks(cfg)
    elif job.name == "select":
        select(cfg, job, log)
    elif job.name == "export":
        (export_rpr if job.phase.startswith("rpr") else export_rsr)(cfg.run, job.phase, job.verl_dir)
    else:
        raise ValueError(f"{job.phase}/{job.name}: no step of that name is done here")


# ---------------------------------------------------------------- the driver

def run_local(job: Job, cfg: CycleConfig) -> None:
    """The default launcher: the job's command here; a non-zero exit raises (the job stays unfinished)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "MODEL": cfg.model, "RUN": cfg.run}
    if job.verl_dir:  # verl's file logger: the job's metrics beside its checkpoints (what the export reads)
        env["VERL_FILE_LOGGER_PATH"] = f"{job.verl_dir}/metrics.jsonl"
        Path(job.verl_dir).mkdir(parents=True, exist_ok=True)
    print("+", shlex.join(job.argv), flush=True)
    subprocess.run(job.argv, check=True, cwd=REPO, env=env)


def _first_start(run: Path, cfg: CycleConfig) -> CycleConfig:
    """cycle.json and run.json: written at the first start (the evaluation settings and the episode's shape fixed
    in run.json, as the CPU loop fixes its profile), read back on a resume (run.json written then if a kill came
    between the two)."""
    from .settings import episode_fields

    saved = run / "cycle.json"
    if saved.is_file():
        cfg = CycleConfig.read(saved)
    elif (run / "run.json").is_file():
        raise FileExistsError(f"{run / 'run.json'}: a run that is not a cycle's is here (no cycle.json); use a new "
                              "--run")
    if not (run / "run.json").is_file():  # what `rsi-lite report` reads first
        ev = eval_settings(cfg)  # checked before anything is written
        if not saved.is_file():
            write_json_atomic(saved, asdict(cfg))
        write_json_atomic(run / "run.json", {"profile": {"name": "verl-27b", "model": cfg.model, "eval": ev,
                                                         "episode": episode_fields(overrides=cfg.overrides),
                                                         "cycle": asdict(cfg)},
                                             "seeds": [0], "controls": [], "cycles": 2})
    return cfg


def start(cfg: CycleConfig, launch=run_local, log=print) -> list[str]:
    """Run (or resume) the cycle in cfg.run; returns the jobs run by this call, as "phase/job"."""
    run = Path(cfg.run)
    run.mkdir(parents=True, exist_ok=True)
    cfg = _first_start(run, cfg)
    ran = []
    for phase in PHASES:
        incoming = retained_before(cfg.run, phase)
        if phase != "base" and incoming is None:
            raise RuntimeError(f"{run / 'selection.json'}: no {LABELS[PHASES[PHASES.index(phase) - 1]]} entry, so "
                               f"{phase} has no start (its select job finished without writing one)")
        for job in phase_jobs(cfg, phase, incoming):
            d = job.dir(cfg.run)
            if d.done:
                continue
            log(f"[{phase}] {job.name}")
            if job.argv:
                launch(job, cfg)
            else:
                run_here(job, cfg, log)
            if job.name == "finish" and not StageDir(run / phase).done:  # left unfinished: run again on resume
                raise RuntimeError(f"{run / phase}: its finish job ran but the stage wrote no DONE")
            d.path.mkdir(parents=True, exist_ok=True)
            d.write("job.json", {"argv": job.argv, "env": job.env, "args": job.args})
            d.mark_done()
            ran.append(f"{phase}/{job.name}")
    kept = StageDir(run).read("selection.json")["RPR-2"]  # the last select job's choice: the run's result
    StageDir(run).write("result.json", {"stages": {"Base": "base", **{LABELS[p]: new_checkpoint(cfg.run, p)
                                                                      for p in PHASES[1:]}},
                                        "retained": kept["retained"], "final_checkpoint": kept["checkpoint"],
                                        "controls": [], "cycles": 2})
    StageDir(run).mark_done()  # the run's DONE, last, as the CPU loop's
    return ran


# ---------------------------------------------------------------- the commands its jobs run
# (the kit's jobs, rewrite, finish, evaluate and floor, live in scale_up/kit_jobs.py)

def merge(verl_dir: str, target: str) -> None:
    """verl's model merger on the newest checkpoint's actor (a LoRA actor: its adapter, in target/lora_adapter)."""
    from .export import latest_step

    subprocess.run([sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp", "--local_dir",
                    str(latest_step(verl_dir) / "actor"), "--target_dir", target], check=True)


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    from . import kit_jobs as kit

    steps = {"rewrite": lambda a: kit.rewrite(a[0], int(a[1]), a[2], a[3]),
             "finish": lambda a: kit.finish(a[0], int(a[1])), "evaluate": lambda a: kit.evaluate(a[0], a[1], a[2]),
             "floor": lambda a: kit.floor(a[0]), "merge": lambda a: merge(a[0], a[1])}
    if args and args[0] in steps:
        steps[args[0]](args[1:])
        return
    ap = argparse.ArgumentParser(prog="python -m scale_up.cycle", description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--launcher", choices=["local", "slurm"], default="local")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--nnodes", type=int, default=4)
    ap.add_argument("--serve", action=argparse.BooleanOptionalAction, default=True,
                    help="the kit's eval and rewrite jobs on verl's vLLM replicas over the cluster (the default); "
                         "--no-serve: on the driver node's one GPU, for a shorter rsi.context_budget")
    ap.add_argument("--dry-run", action="store_true", help="print the jobs, run nothing")
    ap.add_argument("overrides", nargs="*", help="Hydra overrides for every verl PPO job")
    a = ap.parse_args(args)
    cfg = CycleConfig(run=a.run, model=a.model, launcher=a.launcher, steps=a.steps, nnodes=a.nnodes,
                      serve=a.serve, overrides=list(a.overrides))
    if a.dry_run:
        for job in plan_jobs(cfg):
            print(job.describe())
        return
    start(cfg)


if __name__ == "__main__":
    main()
