"""Memory and time of one PPO update: `python -m rsi_lite.bench.update [--trajectories FILE] [--rows 8 --width 820]`.

With `--actor-lr 2e-5 1e-4 3e-4 --epochs 2` it is the learning-rate sweep: one update per rate on the same
batch (each from the same fresh actor), printing how far the actor moved (ratio min/mean/max, approx KL,
clip fraction over the update's minibatches) and in which direction: the mean change of the action tokens'
log-probabilities on the batch's successful episodes and on its failed ones, measured after the update.
A learning rate at which successes do not rise and failures do not fall teaches nothing in one step.

Loads the bundled model the way RPR does (4-bit base, actor LoRA, a fresh critic), then runs
`rpr.update.update` (actor and critic, one epoch) on one batch and prints its wall time and the
process's peak resident memory. The batch is either a step's `trajectories.jsonl` from a run
(`--trajectories runs/cpu/rpr-2/step-005/trajectories.jsonl`) or synthetic: `--rows` episodes
of `--width` tokens, a quarter of them action tokens in three turns, one in four a success.

Every measurement runs in a fresh child process, so the peak belongs to that update alone
(model loading included: the line `after load` says how much of it that is). A watchdog
stops the child with a clear message when its memory passes `--limit-gb` (default: 85% of
this machine's memory) instead of letting the kernel's OOM killer take the session down.
The line `FLOP/s` compares the update's arithmetic with this machine's fp32 matmul rate, measured in the
same child just before the update: the update's FLOPs are counted as 6 x base parameters x batch tokens x
epochs for the actor and again for the critic (the rule of thumb the issue names), and, closer to what a
frozen base really computes, 4 x (forward + the backward to the activations, no weight gradients) plus the
2 x forward passes for the old log-probabilities and values.
A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import threading
import time

from ..rpr.config import RPRConfig

RPR_DEFAULTS = RPRConfig()


def _rss_gb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def _watchdog(limit_gb: float) -> None:
    def run():
        while True:
            if _rss_gb() > limit_gb:
                print(f"watchdog: resident memory passed {limit_gb:.1f} GB; stopping the measurement", flush=True)
                os._exit(3)
            time.sleep(0.05)

    threading.Thread(target=run, daemon=True).start()


def synthetic(rows: int, width: int, seed: int = 0) -> list:
    """`rows` episodes of `width` tokens: prompt, then three turns of action + observation (a quarter actions)."""
    import random

    from ..rollout.trajectory import Trajectory

    rng = random.Random(seed)
    out = []
    for i in range(rows):
        n = max(16, width - rng.randrange(0, width // 2)) if i else width  # the first row is the widest
        ids = [rng.randrange(100, 40000) for _ in range(n)]
        start, act = n // 4, max(1, n // 12)
        spans = [[a, a + act] for a in (start + turn * (n - start) // 3 for turn in range(3))]
        mask = [0] * n
        for a, b in spans:
            mask[a:b] = [1] * (b - a)
        lps = [-rng.random() if m else 0.0 for m in mask]
        ok = i % 4 == 0
        out.append(Trajectory(task=f"synthetic-{i}", task_path="", suite="synthetic", family="synthetic",
                              difficulty="easy", harness="plain", action_format="bash", policy="base", seed=i,
                              system="", messages=[], token_ids=ids, action_mask=mask, logprobs=lps,
                              turn_spans=spans, finish_reason="done", turns=3,
                              verifier={"strict": ok, "passed": 1 if ok else 0, "total": 1},
                              rewards={"spr": 1.0 if ok else 0.1, "fdr": 1.0 if ok else 0.0},
                              tokens={"generated": sum(mask)}, timings={}))
    return out


def matmul_rate(n: int = 1536, reps: int = 6) -> float:
    """This machine's fp32 matmul rate, FLOP/s (an n x n by n x n product, best of `reps`)."""
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best


def _measure(args: dict, q) -> None:
    import torch

    _watchdog(args["limit_gb"])
    torch.manual_seed(0)
    from ..policy.actor import load_actor
    from ..policy.critic import add_critic, token_logprobs
    from ..policy.model import PolicyConfig, load_policy
    from ..rollout.trajectory import read_trajectories
    from ..rpr.config import RPRConfig
    from ..rpr.stage import make_optimizers
    from ..rpr.update import update

    if args["init"]:
        policy = add_critic(load_actor(args["init"], quantization=args["quantization"]))
    else:
        policy = add_critic(load_policy(PolicyConfig(quantization=args["quantization"])))
    trajs = read_trajectories(args["trajectories"]) if args["trajectories"] else synthetic(args["rows"], args["width"])
    cfg = RPRConfig(minibatch=args["minibatch"], actor_lr=args["actor_lr"], critic_lr=args["critic_lr"],
                    gradient_checkpointing=args["gradient_checkpointing"] == "on",
                    checkpoint_tokens=args["checkpoint_tokens"], accumulate=args["accumulate"],
                    fold_old_pass=args["fold_old_pass"] == "on")
    optims = make_optimizers(policy, cfg)
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

    def action_logprobs():
        with torch.no_grad():
            return [token_logprobs(policy, torch.tensor([t.token_ids]), torch.ones(1, len(t.token_ids), dtype=torch.long),
                                   only=torch.tensor([t.action_mask]))[0] for t in trajs]

    before = action_logprobs() if args["direction"] else None
    rate = matmul_rate()
    t0 = time.perf_counter()
    row = update(policy, trajs, cfg, optims, train_actor=True, epochs=args["epochs"])
    wall = time.perf_counter() - t0
    out = {"rows": len(trajs), "widest": max(len(t.token_ids) for t in trajs),
           "tokens": sum(len(t.token_ids) for t in trajs), "action_tokens": sum(sum(t.action_mask) for t in trajs),
           "after_load_gb": loaded, "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
           "wall_s": wall, "successes": sum(bool(t.verifier.get("strict")) for t in trajs), "matmul_flops": rate,
           "base_params": sum(p.numel() for n, p in policy.model.named_parameters() if "lora_" not in n),
           "folded": bool(row.get("update/old_pass_folded")),
           **{k: row.get(k) for k in ("ratio/min", "ratio/mean", "ratio/max", "losses/approx_kl", "losses/clipfrac")}}
    if before is not None:
        after = action_logprobs()
        for label, want in (("success", True), ("failure", False)):
            d = [float((a - b).sum() / max(1, sum(t.action_mask))) for a, b, t in zip(after, before, trajs)
                 if bool(t.verifier.get("strict")) == want]
            out[f"dlogp_{label}"] = sum(d) / len(d) if d else float("nan")
    q.put(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trajectories", default=None, help="a trajectories.jsonl (default: a synthetic batch)")
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--width", type=int, default=820)
    ap.add_argument("--minibatch", type=int, default=4)
    ap.add_argument("--quantization", default="4bit")
    ap.add_argument("--init", default=None, help="an actor adapter to start from (default: the base model)")
    ap.add_argument("--actor-lr", type=float, nargs="+", default=[RPR_DEFAULTS.actor_lr],
                    help="one update per rate, each from the same fresh actor (the sweep)")
    ap.add_argument("--critic-lr", type=float, default=RPR_DEFAULTS.critic_lr)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--accumulate", type=int, default=RPR_DEFAULTS.accumulate,
                    help="minibatches a step (0: the whole batch, as the profiles train; RPRConfig.accumulate)")
    ap.add_argument("--fold-old-pass", choices=("on", "off"), default="on",
                    help="on: where the first epoch is one step, its forwards are the old pass (RPRConfig.fold_old_pass)")
    ap.add_argument("--gradient-checkpointing", choices=("on", "off"), default="on",
                    help="on: every minibatch (RPRConfig's default); off: only those past --checkpoint-tokens")
    ap.add_argument("--checkpoint-tokens", type=int, default=RPR_DEFAULTS.checkpoint_tokens,
                    help="with checkpointing off, a minibatch past this many padded tokens is checkpointed (0: never)")
    ap.add_argument("--direction", action="store_true",
                    help="also measure the change of the action log-probabilities (success vs failure)")
    ap.add_argument("--limit-gb", type=float, default=None)
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON line too")
    a = ap.parse_args(argv)
    if a.limit_gb is None:
        a.limit_gb = 0.85 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    ctx = mp.get_context("spawn")
    for lr in a.actor_lr:
        q = ctx.Queue()
        p = ctx.Process(target=_measure, args=({**vars(a), "actor_lr": lr}, q))
        p.start()
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"the measurement failed (exit {p.exitcode}); see above")
        r = q.get()
        print(f"batch: {r['rows']} episodes ({r['successes']} successes), widest {r['widest']} tokens, "
              f"{r['tokens']} tokens, {r['action_tokens']} action tokens; minibatch {a.minibatch}; {a.quantization}; "
              f"actor lr {lr:g}, {a.epochs} epoch(s); checkpointing {a.gradient_checkpointing}"
              + ("" if a.gradient_checkpointing == "on" else f", past {a.checkpoint_tokens} tokens")
              + f"; accumulate {a.accumulate}; old pass "
              + ("folded into the first epoch" if r["folded"] else "separate"))
        print(f"after load       {r['after_load_gb']:.2f} GB")
        print(f"update wall      {r['wall_s']:.1f} s")
        print(f"update peak RSS  {r['peak_gb']:.2f} GB")
        print(f"ratio            min {r['ratio/min']:.3f}  mean {r['ratio/mean']:.3f}  max {r['ratio/max']:.3f}; "
              f"approx KL {r['losses/approx_kl']:.2e}; clip fraction {r['losses/clipfrac']:.3f}")
        tokens, n, epochs = r["tokens"], r["base_params"], a.epochs
        rule = 2 * 6 * n * tokens * epochs  # actor and critic, 6 N T each epoch
        # + the old log-prob and value forwards where they ran apart from the first epoch
        frozen = 2 * 4 * n * tokens * epochs + (0 if r["folded"] else 2 * 2 * n * tokens)
        print(f"FLOP/s           machine matmul {r['matmul_flops'] / 1e9:.0f} GFLOP/s; update at 6NT (actor + critic) "
              f"{rule / r['wall_s'] / 1e9:.1f} GFLOP/s = {100 * rule / r['wall_s'] / r['matmul_flops']:.0f}%; "
              f"counting a frozen base's work {frozen / r['wall_s'] / 1e9:.1f} GFLOP/s = "
              f"{100 * frozen / r['wall_s'] / r['matmul_flops']:.0f}%")
        if "dlogp_success" in r:
            print(f"d log p/token    successes {r['dlogp_success']:+.4f}  failures {r['dlogp_failure']:+.4f}")
        if a.json:
            print(json.dumps({"actor_lr": lr, **r}))


if __name__ == "__main__":
    main()
