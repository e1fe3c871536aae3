"""The cycle's jobs that run in the kit's environment (`python -m scale_up.cycle rewrite|finish|evaluate|floor`,
on the node where the driver runs): the kit's own stages and evaluation on the run's files. `rewrite` and
`evaluate` generate only, and load the policy so that a 27B model fits one GPU (`scale_up.loading`: served by
vLLM where it imports, else held in bf16); `finish` and `floor` load no model.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path

from rsi_lite.records import read_json, write_json_atomic
from rsi_lite.rundir import StageDir, rsr_dir


def _loading(d: Path, how) -> None:
    """loading.json beside an unfinished job's files: how it loaded the policy and the memory that was estimated."""
    if not StageDir(d).done:
        write_json_atomic(Path(d) / "loading.json", how.record())


@contextmanager
def serving(run: str, init: str, model: str, where: Path, *, timeout: float = 3600.0, argv: list[str] | None = None):
    """The actor `init` served by verl's standalone replicas for one kit job, when the run's cycle.json says
    `serve` (else None): `python -m scale_up.serve` started in verl's environment, its servers.json (in `where`)
    awaited, yielded, and the servers stopped when the job is done. A server process that exits first, or no
    servers.json within `timeout` seconds, is an error with the end of its log. `argv`: another command that
    writes WHERE/servers.json the same way (the tests)."""
    import subprocess
    import time

    from .settings import SERVE

    cycle = Path(run) / "cycle.json"
    saved = read_json(cycle) if cycle.is_file() else {}
    if argv is None and not saved.get("serve", SERVE):  # absent: CycleConfig's default
        yield None
        return
    cwd = None
    if argv is None:  # cycle.json holds every CycleConfig field (written whole at the first start)
        missing = [f for f in ("verl_python", "nnodes", "gpus_per_node") if f not in saved]
        if missing:
            raise ValueError(f"{cycle}: field(s) {', '.join(missing)} missing")
        argv = [saved["verl_python"], "-m", "scale_up.serve", "--init", init, "--model", model, "--out", str(where),
                "--nnodes", str(saved["nnodes"]), "--gpus-per-node", str(saved["gpus_per_node"])]
        cwd = Path(__file__).resolve().parents[1]  # the repository: verl_python may be relative to it
    where.mkdir(parents=True, exist_ok=True)
    path, log_path = where / "servers.json", where / "serve.log"
    path.unlink(missing_ok=True)  # a server list of an earlier start points at servers that are gone
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while not path.is_file():
                if proc.poll() is not None:
                    raise RuntimeError(f"{log_path}: the servers exited ({proc.returncode}) before {path} was "
                                       f"written:\n{log_path.read_text()[-2000:]}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path}: not written in {timeout:.0f} s ({log_path} says how far it got)")
                time.sleep(1.0)
            yield read_json(path)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def rewrite(run: str, cycle: int, init: str, model: str) -> None:
    """RSR-N up to its dataset, with the `gpu` profile's self-rewrite settings and PPO's episode shape (run.json's
    `profile.episode`, `episode_shape`), in the kit's environment: generation only, so on a GPU the policy is
    served by vLLM or held in bf16 (`scale_up.loading`), and the stage's config records the precision, the
    backend and the episodes at once it ran with."""
    from rsi_lite.loop.profiles import profile
    from rsi_lite.rsr.stage import run_rsr
    from rsi_lite.tasks.suites import ensure_pool

    from .loading import plan_job

    cfg = profile("gpu").rsr
    cfg.init, cfg.model, cfg.pool = init, model, str(ensure_pool(Path(run), profile("gpu").pool_size))
    cfg.rollout = replace(cfg.rollout, **episode_shape(run))  # PPO's: SFT teaches the format PPO samples
    d = rsr_dir(run, cycle).path
    done = (d / "dataset.jsonl").is_file()  # a resumed rewrite with its dataset written generates nothing more
    with nullcontext() if done else serving(run, init, model, d / "serve") as servers:
        how = plan_job("rewrite", init, model, cfg.rollout, servers=servers)
        cfg.dtype, cfg.rollout = how.loading.dtype, how.rollout
        _loading(d, how)
        run_rsr(Path(run), cycle, cfg, until="dataset", load=how.load)


def finish(run: str, cycle: int) -> None:
    """RSR-N's last step: the kit's stage finds the exported checkpoint and writes the funnel and DONE. It loads no
    model: without the checkpoint the stage would fine-tune a float32 copy of the base on this one node, so that is
    refused, naming the file the export job writes."""
    from rsi_lite.rsr.stage import run_rsr

    stage = rsr_dir(run, cycle)
    if not stage.done and not (stage / "checkpoint" / "adapter_config.json").is_file():
        raise FileNotFoundError(f"{stage / 'checkpoint' / 'adapter_config.json'}: missing; the export job writes it "
                                "from verl's SFT run (the finish job trains nothing)")
    run_rsr(Path(run), cycle)


def run_profile(run: str | Path, *required: str) -> tuple[Path, dict]:
    """(run.json's path, its `profile`), fixed at the cycle's first start; a `required` field it lacks is an error
    naming the file and the field."""
    path = Path(run) / "run.json"
    prof = read_json(path).get("profile", {})
    for f in required:
        if f not in prof:
            raise ValueError(f"{path}: profile.{f} missing (run.json of a cycle is written by scale_up.cycle's "
                             "first start)")
    return path, prof


def episode_shape(run: str | Path) -> dict:
    """The episode's shape a run's generation jobs share with its PPO (`settings.episode_fields`), fixed in its
    run.json at the first start (`profile.episode`)."""
    return run_profile(run, "episode")[1]["episode"]


def run_settings(run: str | Path):
    """(EvalConfig, model) of a run, from its run.json (fixed at the first start); a missing field is an error
    naming the file and the field."""
    from rsi_lite.loop.profiles import EvalConfig

    path, prof = run_profile(run, "eval", "model")
    try:
        return EvalConfig.from_dict(prof["eval"]), prof["model"]
    except TypeError as e:
        raise ValueError(f"{path}: profile.eval: {e}") from None


def evaluate(run: str, label: str, checkpoint: str) -> dict:
    """A phase's evaluation (the kit's environment): the CPU loop's own `run_eval` into eval-<stage>/ with the
    run's settings: results.json, trajectories.jsonl, results.html, DONE. Generation only: on a GPU the policy is
    served by vLLM or held in bf16 (`scale_up.loading`; loading.json says which)."""
    from rsi_lite.loop.phases import eval_dir, run_eval

    from .loading import plan_job

    ev, model = run_settings(run)
    d = eval_dir(Path(run), label)
    if StageDir(d).done:
        return run_eval(d, checkpoint, ev, model)
    with serving(run, checkpoint, model, d.with_name(d.name + "-serve")) as servers:
        how = plan_job("eval", checkpoint, model, ev.rollout, servers=servers)
        ev.rollout = how.rollout
        _loading(d, how)
        return run_eval(d, checkpoint, ev, model, load=how.load)


def floor(run: str) -> None:
    """The floor row (the kit's environment): `run_floor` into eval-floor/. As in the CPU loop it is a measurement
    beside the run, so a failure is reported and the cycle goes on (the report then leaves the row out)."""
    from rsi_lite.loop.phases import run_floor

    ev, _ = run_settings(run)
    try:
        run_floor(Path(run) / "eval-floor", ev)
    except Exception as e:  # noqa: BLE001 -- as Loop.floor: never a reason to stop the run
        print(f"[floor] not measured: {type(e).__name__}: {e}", flush=True)
