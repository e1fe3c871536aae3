"""How far the rollout's recorded log-probabilities are from the training forward's:
`python -m rsi_lite.bench.rollout_gap [--suite tasks_mini/core] [--episodes 8] [--max-turns N]
[--settings 1.0:1.0 0.6:1.0] [--backend native|transformers]`.

Loads the actor the way RPR does (`rpr.stage.load_actor_critic`, the bundled model, `RPRConfig`'s init and
dtype), rolls out `--episodes` tasks of the suite with RPR's training rollout settings (plain harness, its turns
and token limit, the `--backend` engine: by default the one 'auto' picks) at each TEMPERATURE:TOP_P of `--settings`, then runs the update's own
"old" pass (`rpr.targets.old_pass`) on the batch and compares, over the action tokens: the mean and the largest
|old_lp - rollout_lp| (the mean is `logprobs/rollout_gap`), the smallest and largest ratio pi_old / pi_rollout,
the rollout correction's statistics at `PPOConfig.tis_cap` and whether `RPRConfig.rollout_correction` 'auto'
turns it on for that setting. A benchmark, not a test: run it by hand and quote its output.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path


def measure(policy, tasks, rcfg, cfg) -> dict:
    import torch

    from ..algos.ppo import truncated_is_weights
    from ..rollout.engine import run_episodes
    from ..rpr.targets import device_batch, old_pass, rollout_correction

    trajs = run_episodes(policy, [(t, i) for i, t in enumerate(tasks)], rcfg)
    batch = device_batch(policy, trajs, cfg)
    _, old_lp = old_pass(policy, batch, train_actor=True)
    on = batch.mask.bool()
    diff = (old_lp - batch.rollout_lps)[on]
    ratio = torch.exp(diff)
    _, tis = truncated_is_weights(old_lp, batch.rollout_lps, batch.mask, cfg.ppo.tis_cap)
    return {"temperature": rcfg.temperature, "top_p": rcfg.top_p, "episodes": len(trajs),
            "action_tokens": int(on.sum()), "gap_mean": float(diff.abs().mean()), "gap_max": float(diff.abs().max()),
            "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()), **tis,
            "auto_on": rollout_correction(cfg, trajs)}


def main(argv: list[str] | None = None) -> None:
    import torch

    from ..rpr.config import RPRConfig
    from ..rpr.stage import load_actor_critic
    from ..tasks.task import find_tasks

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--suite", default="tasks_mini/core")
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--settings", nargs="+", default=["1.0:1.0", "0.6:1.0"], help="TEMPERATURE:TOP_P pairs")
    ap.add_argument("--max-turns", type=int, default=None, help="default: RPR's training rollout's")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default=RPRConfig().rollout.generation_backend,
                    choices=["auto", "native", "transformers", "ctranslate2"], help="what serves the rollout")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON lines too")
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    cfg = RPRConfig()
    policy = load_actor_critic(cfg.init, None, cfg.model, cfg.dtype)
    tasks = find_tasks(Path(args.suite))[:args.episodes]
    for s in args.settings:
        temperature, top_p = (float(x) for x in s.split(":"))
        rcfg = replace(cfg.rollout, temperature=temperature, top_p=top_p, seed=args.seed,
                       generation_backend=args.backend, max_turns=args.max_turns or cfg.rollout.max_turns)
        r = measure(policy, tasks, rcfg, cfg)
        print(f"[{args.backend}] T {temperature} top_p {top_p}: {r['episodes']} episodes, {r['action_tokens']} action tokens; "
              f"|old_lp - rollout_lp| mean {r['gap_mean']:.2e} max {r['gap_max']:.2e}; ratio pi_old/pi_rollout "
              f"min {r['ratio_min']:.4f} max {r['ratio_max']:.4f}; at C {cfg.ppo.tis_cap}: weight mean "
              f"{r['tis/weight_mean']:.4f}, truncated {r['tis/truncated_frac']:.4f}; auto: "
              f"{'on' if r['auto_on'] else 'off'}")
        if args.json:
            print(json.dumps(r))


if __name__ == "__main__":
    main()
