"""`rsi-lite`: the command line. Each subcommand is a thin call into the library."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from ..algos.rewards import DEFAULT_DIVISOR, REWARDS
from ..paths import TASKS_ROOT
from ..tracking import REPORT_TO
from .tasks import add_tasks_parser


def cmd_rewards_audit(a) -> int:
    from ..algos.rewards import DEFAULT_ALPHA, audit

    reports, families = [], []
    for no, line in enumerate(Path(a.trajectories).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            sys.exit(f"error: {a.trajectories}:{no}: not JSON ({e})")
        rep = rec.get("verifier") or rec.get("report")
        if not isinstance(rep, dict):
            sys.exit(f"error: {a.trajectories}:{no}: field 'verifier' (the VerifierReport) is missing")
        reports.append(rep)
        families.append(str(rec.get("family", "")))
    if a.divisors:
        text = Path(a.divisors).read_text() if Path(a.divisors).is_file() else a.divisors
        try:
            divisors = json.loads(text)
        except json.JSONDecodeError as e:
            sys.exit(f"error: --divisors {a.divisors}: neither a JSON file nor JSON text ({e})")
    else:  # the kit's own D_f: the 90th percentile of each family's check counts in tasks_mini/
        from ..algos.rewards import family_divisors
        from ..tasks import family_check_counts, find_tasks

        divisors = family_divisors(family_check_counts(find_tasks(TASKS_ROOT)))
    rows = audit(reports, divisors, default_divisor=a.divisor, alpha=a.alpha if a.alpha is not None else DEFAULT_ALPHA,
                 families=families)
    print(f"{'reward':6} {'episodes':>8} {'failures':>8} {'failure share':>13} {'failures>=1.0':>13} {'fail, all run passed':>20}")
    for r in rows:
        print(f"{r.reward:6} {r.episodes:8} {r.failures:8} {100 * r.failure_share:12.2f}% {r.failures_at_least_one:13} {r.failures_all_executed_passed:20}")
    print("paper (4,352 trajectories): FDR 50.09% share, 158 failures >= 1.0, 48 all executed passed; SPR 28.72%, 0")
    return 0


def cmd_score_audit(a) -> int:
    from ..report.score_audit import explain

    for s in a.score:
        print(explain(s, a.tasks, a.runs))
    return 0


def cmd_sandbox_base_image(a) -> int:
    from ..sandbox.base_image import build_base_image

    print(build_base_image(tag=a.tag, suite=a.suite, mirror=a.mirror))
    return 0


def cmd_sandbox_info(a) -> int:
    from ..sandbox import bwrap_available, docker_available

    for name, why in (("bwrap", bwrap_available()), ("docker", docker_available())):
        print(f"{name:7} {'available' if why is None else 'unavailable: ' + why}")
    print("local   available on request only (no isolation)")
    return 0


def cmd_model_prepare(a) -> int:
    from ..policy.model import prepare_model

    print(prepare_model(force=a.force))
    return 0


def cmd_model_info(a) -> int:
    from ..policy.model import model_info

    for k, v in model_info(a.model).items():
        print(f"{k:16} {v}")
    return 0


def _load_checkpoint(checkpoint: str, quantization: str):
    from ..policy.model import PolicyConfig, load_policy

    cfg = PolicyConfig(quantization=quantization)
    if checkpoint == "base":
        return load_policy(cfg)
    path = Path(checkpoint)
    if not (path / "adapter_config.json").is_file():
        sys.exit(f"error: {path}/adapter_config.json: missing (a checkpoint is a saved actor adapter, or 'base')")
    return load_policy(cfg, adapter_path=path)


def cmd_eval(a) -> int:
    from ..eval.evaluate import evaluate, table
    from ..rollout.engine import RolloutConfig

    rollout = RolloutConfig(harness=a.harness, action_format=a.format, max_turns=a.max_turns,
                            max_new_tokens=a.max_new_tokens, temperature=a.temperature, backend=a.backend,
                            engine=a.engine, generation_backend=a.generation_backend, compute_type=a.compute_type,
                            **({"batch_size": a.batch_size} if a.batch_size else {}))
    policy = _load_checkpoint(a.checkpoint, a.quantization)
    doc = evaluate(policy, a.suite, Path(a.out), k=a.k, rollout=rollout, checkpoint=a.checkpoint, limit=a.limit,
                   spread=a.spread, progress=True)
    print(f"checkpoint {a.checkpoint}, harness {a.harness}, {a.k} runs per task")
    print(table(doc["suites"]))
    b = doc["breakdown"]
    print(f"wall {doc['wall_s']:.0f} s: generating {b.get('rollout/generating', 0):.0f} s (the model's forwards "
          f"{b.get('rollout/forward', 0):.0f} s), slots idle {b.get('rollout/waiting', 0):.0f} s, serving weights "
          f"{b.get('model/serve', 0):.0f} s, other {b.get('other', 0):.0f} s; {b.get('rollout/decode_tokens', 0)} "
          f"tokens generated ({doc['rollout']['generation_backend']})")
    print(f"wrote {Path(a.out) / 'results.json'}")
    return 0


def cmd_rsr(a) -> int:
    import json

    from ..records import read_json
    from ..rsr import RSRConfig, run_discovery_ablation, run_rsr
    from ..rundir import rsr_checkpoint, rsr_dir

    if (rsr_dir(a.run, a.cycle) / "config.json").is_file():
        cfg = None  # resuming: the stage's own config
    else:
        cfg = RSRConfig.from_dict(read_json(a.config)) if a.config else RSRConfig()
        if a.init:
            cfg.init = a.init
        if a.pool_size:
            cfg.pool_size = a.pool_size
        if a.report_to:
            cfg.sft.report_to = a.report_to
    funnel = run_rsr(Path(a.run), a.cycle, cfg, progress=True)
    print(json.dumps({k: v for k, v in funnel.items() if k != "sft"}, indent=1))
    print(f"checkpoint: {rsr_checkpoint(a.run, a.cycle)}")
    if a.ablation:
        print(json.dumps(run_discovery_ablation(Path(a.run), a.cycle, progress=True), indent=1))
    return 0


def cmd_rpr(a) -> int:
    import json

    from ..records import read_json
    from ..rpr.config import RPRConfig
    from ..rpr.stage import run_rpr
    from ..rundir import inherited_critic, rpr_dir, rsr_checkpoint

    run = Path(a.run)
    a.from_base = a.from_ == "base"
    name = f"rpr-{a.cycle}" + ("-from-base" if a.from_base else "")
    if (rpr_dir(run, a.cycle, name) / "config.json").is_file():
        cfg = None  # resuming: the stage's own config
    else:
        cfg = RPRConfig.from_dict(read_json(a.config)) if a.config else RPRConfig()
        rsr = rsr_checkpoint(run, a.cycle)
        cfg.init = "base" if a.from_base else (a.init or (str(rsr) if rsr.is_dir() else cfg.init))
        critic = inherited_critic(run, a.cycle)
        if a.critic == "inherit" and not cfg.critic_from and critic and Path(critic).is_dir():
            cfg.critic_from = critic  # where the previous cycle's stage ran here
        if a.critic == "reset":
            cfg.critic_from = ""
        if a.reward:
            cfg.reward = a.reward
        if a.seed is not None:
            cfg.seed = a.seed
        if a.report_to:
            cfg.report_to = a.report_to
    summary = run_rpr(run, a.cycle, cfg, progress=True, name=name)
    print(json.dumps(summary, indent=1))
    return 0


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def cmd_run(a) -> int:
    from ..loop.phases import start
    from ..report.write import stage_table, write_report

    controls = list(dict.fromkeys((a.control or []) + (["critic-reset"] if a.critic == "reset" else [])
                                  + (["reward-fdr"] if a.reward == "fdr" else [])))
    # SIGTERM (`kill`, a session's end) unwinds like Ctrl-C: sandboxes are closed and the stage's attempt is
    # recorded in cost.json (`Loop._timed`), so a resumed stage's wall counts the time the killed attempt spent
    signal.signal(signal.SIGTERM, _terminated)
    try:
        start(Path(a.out), a.profile, resume=a.resume, controls=controls, seeds=a.seeds, cycles=a.cycles,
              progress=not a.quiet,
              report_to=a.report_to)
    except (FileExistsError, RuntimeError, ValueError) as e:
        sys.exit(f"error: {e}")
    rep = write_report(Path(a.out))
    print(stage_table(rep))
    print(f"wrote {Path(a.out) / 'report.md'}, report.html, report.json")
    return 0


def cmd_report(a) -> int:
    from ..report.write import markdown, write_report

    if not (Path(a.run) / "run.json").is_file():
        sys.exit(f"error: {a.run}/run.json: missing (not a run directory of `rsi-lite run`)")
    try:
        print(markdown(write_report(Path(a.run), a.also, a.out)))
    except ValueError as e:
        sys.exit(f"error: {e}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rsi-lite", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    add_tasks_parser(sub)

    rw = sub.add_parser("rewards", help="reward tools").add_subparsers(dest="sub", required=True)
    r = rw.add_parser("audit", help="failures' share of reward under FDR and SPR")
    r.add_argument("trajectories", help="a trajectories.jsonl (each record has a 'verifier' report)")
    r.add_argument("--divisor", type=float, default=DEFAULT_DIVISOR, help="D_f for families not in --divisors")
    r.add_argument("--divisors", help='a JSON file or text {"family": D_f, ...}; default: computed from tasks_mini/')
    r.add_argument("--alpha", type=float)
    r.set_defaults(fn=cmd_rewards_audit)

    s = sub.add_parser("score-audit", help="which task and run counts give a reported percentage")
    s.add_argument("score", type=float, nargs="+")
    s.add_argument("--tasks", type=int, nargs="+", required=True)
    s.add_argument("--runs", type=int, nargs="+", default=[1, 2, 3])
    s.set_defaults(fn=cmd_score_audit)

    e = sub.add_parser("eval", help="Mean@k success per suite under one harness")
    e.add_argument("--checkpoint", default="base", help="'base' or a saved actor adapter directory")
    e.add_argument("--suite", nargs="+", default=["core"], help="suite names or task directories")
    e.add_argument("--harness", default="plain", choices=["plain", "exemplar", "state_machine", "verifier_feedback"])
    e.add_argument("--format", default="bash", choices=["bash", "json"])
    e.add_argument("--k", type=int, default=3)
    e.add_argument("--out", required=True)
    e.add_argument("--limit", type=int, help="first N tasks of each suite (small budgets)")
    e.add_argument("--spread", action="store_true",
                   help="with --limit: N tasks evenly spaced through each suite (every family), not the first N")
    e.add_argument("--max-turns", type=int, default=6)
    e.add_argument("--max-new-tokens", type=int, default=96)
    e.add_argument("--temperature", type=float, default=0.6)
    e.add_argument("--quantization", default="lora", choices=["lora", "4bit", "full"],
                   help="lora: fp32 base + LoRA (default; NF4 breaks the 135M model), 4bit: QLoRA")
    e.add_argument("--batch-size", type=int, help="episodes live at once (default: RolloutConfig's, as in every stage)")
    e.add_argument("--engine", default="continuous", choices=["continuous"],
                   help="the rollout engine; 'continuous' is the only one (accepted so that older commands still run)")
    e.add_argument("--generation-backend", default="auto", choices=["auto", "native", "transformers", "ctranslate2"],
                   help="what serves the replies (auto: native where it serves the model, else transformers; see "
                        "rsi_lite.policy.gen.dispatch)")
    e.add_argument("--compute-type", default="float32", choices=["float32", "int8"],
                   help="ctranslate2's weight precision (int8 is faster and changes greedy choices)")
    e.add_argument("--backend", default="auto", choices=["auto", "bwrap", "docker", "local"])
    e.set_defaults(fn=cmd_eval)

    r = sub.add_parser("rsr", help="Recursive Self-Rewrite: discovery -> runbooks -> review -> re-solve -> SFT")
    r.add_argument("--run", required=True, help="the run directory (the stage writes DIR/rsr-N/)")
    r.add_argument("--cycle", type=int, default=1)
    r.add_argument("--config", help="a JSON file of RSRConfig fields (ignored when resuming)")
    r.add_argument("--init", help="'base' or the adapter directory to start from")
    r.add_argument("--pool-size", type=int, help="tasks of the generated training pool")
    r.add_argument("--ablation", action="store_true",
                   help="also fine-tune straight on the stripped discovery successes (DIR/rsr-N-ablation/)")
    r.add_argument("--report-to", choices=REPORT_TO, help="also write the SFT curves to DIR/rsr-N/tensorboard/")
    r.set_defaults(fn=cmd_rsr)

    p2 = sub.add_parser("rpr", help="Recursive Policy Refinement: critic warm-up, calibration, joint PPO")
    p2.add_argument("--run", required=True, help="the run directory (the stage writes DIR/rpr-N/)")
    p2.add_argument("--cycle", type=int, default=1)
    p2.add_argument("--config", help="a JSON file of RPRConfig fields (ignored when resuming)")
    p2.add_argument("--init", help="the actor adapter to start from (default: DIR/rsr-N/checkpoint when present)")
    p2.add_argument("--from", dest="from_", choices=["base"],
                    help="--from base: PPO straight from the base model (the paper's control), in DIR/rpr-N-from-base")
    p2.add_argument("--critic", choices=["inherit", "reset"], default="inherit",
                    help="inherit DIR/rpr-(N-1)/critic when present (default) or start a fresh one")
    p2.add_argument("--reward", choices=list(REWARDS))
    p2.add_argument("--seed", type=int, help="the training seed (batch draws, rollouts, minibatch order; default the "
                    "config's): a `rsi-lite run --seeds N` run's RPR stages use N, so --seed N repeats one beside it")
    p2.add_argument("--report-to", choices=REPORT_TO, help="also write the PPO curves to DIR/rpr-N/tensorboard/")
    p2.set_defaults(fn=cmd_rpr)

    r = sub.add_parser("run", help="the five-phase loop Base -> RSR-1 -> RPR-1 -> RSR-2 -> RPR-2, evaluated after each")
    r.add_argument("--profile", choices=["tiny", "cpu", "gpu", "smoke"], default="tiny",
                   help="tiny: < 20 min on 2 cores; cpu: the mini replication (hours); gpu: larger model and budgets")
    r.add_argument("--out", required=True, help="the run directory")
    r.add_argument("--resume", action="store_true", help="continue the run in --out from its last finished step")
    r.add_argument("--control", action="append", choices=["direct-ppo"], help="also run PPO straight from Base")
    r.add_argument("--critic", choices=["inherit", "reset"], default="inherit",
                   help="reset: also run RPR-2 with a fresh critic (the main branch inherits RPR-1's)")
    r.add_argument("--reward", choices=["spr", "fdr"], default="spr", help="fdr: also run RPR-2's FDR branch")
    r.add_argument("--seeds", type=int, nargs="+", default=[0], help="independent training seeds")
    r.add_argument("--cycles", type=int, choices=[1, 2],
                   help="2 (default): the five phases; 1: stop after RPR-1 (a second training seed of cycle one); "
                        "--resume --cycles 2 extends a one-cycle run to the five phases")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    r.add_argument("--report-to", choices=REPORT_TO,
                   help="tensorboard: every stage's SFT and PPO curves also under OUT (tensorboard --logdir OUT)")
    r.set_defaults(fn=cmd_run)
    r = sub.add_parser("report", help="the stage table, controls, funnel, curves and cost of a run")
    r.add_argument("run")
    r.add_argument("also", nargs="*", help="further runs of the same profile (other training seeds) to join the table")
    r.add_argument("--out", help="where report.md/.html/.json go (default: RUN)")
    r.set_defaults(fn=cmd_report)

    md = sub.add_parser("model", help="the policy's model").add_subparsers(dest="sub", required=True)
    m = md.add_parser("prepare", help="convert the bundled GGUF model to safetensors in the cache (once)")
    m.add_argument("--force", action="store_true")
    m.set_defaults(fn=cmd_model_prepare)
    m = md.add_parser("info", help="what is loaded, where from, its size")
    m.add_argument("model", nargs="?", default="smollm2-135m")
    m.set_defaults(fn=cmd_model_info)

    sb = sub.add_parser("sandbox", help="sandbox tools").add_subparsers(dest="sub", required=True)
    b = sb.add_parser("base-image", help="build the Docker base image locally (debootstrap + docker import)")
    b.add_argument("--tag", default="rsi-lite/base:bookworm")
    b.add_argument("--suite", default="bookworm")
    b.add_argument("--mirror", default="http://deb.debian.org/debian")
    b.set_defaults(fn=cmd_sandbox_base_image)
    b = sb.add_parser("info", help="which backends work here")
    b.set_defaults(fn=cmd_sandbox_info)
    return p


def main(argv: list[str] | None = None) -> int:
    from ..tasks.task import TaskError

    args = build_parser().parse_args(argv)
    try:
        return args.fn(args) or 0
    except TaskError as e:  # it names the task's file and line
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    sys.exit(main())
