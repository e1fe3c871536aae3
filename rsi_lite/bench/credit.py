"""Where a critic's credit goes: the whitened advantages a refinement stage's critic gives its own batches, per
kind of task and outcome, beside the same batches under a constant baseline and under turn values.

    python -m rsi_lite.bench.credit --run runs/learns/ppo-s0/rpr-1 --pool runs/learns/pool [--steps 10:] [--by turn]

For each step directory of the stage (or the slice `--steps` picks) it reads the batch's trajectories, computes
the critic's values with the stage's final critic (`RUN/critic`; the critic of each step is not kept, so read the
figures for the last steps as the closest to what the update saw), and the advantages three ways:

    critic   TB-GAE on the critic's value at every token (the paper's, `RPRConfig.value_at` 'token')
    turn     TB-GAE on each turn's first value (`value_at` 'turn')
    const    TB-GAE on one value for the whole batch (its mean reward): no credit assignment at all

each whitened over the batch's action tokens as the update does. It prints, per (kind, success), the episodes,
the mean whitened advantage over their action tokens, and the share of those tokens whose advantage is negative:
a success whose tokens are pushed down is a success the update partly unlearns.

With `--by turn` it prints instead, under the stage's own estimator (`RPRConfig.value_at`; for a critic-free stage, its
group advantages, which need no critic), one line per action turn,
outcome and kind of reply (a command, the done marker, or a reply the harness could not parse, `eval.turns`): the replies,
their mean whitened and raw advantage, and how many of them the update pushes down (mean whitened advantage < 0).
The same tokens (TASK COMPLETE) pushed up in successes and down in failures move by the difference.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

BASELINES = ("critic", "turn", "const")


def credit_rows(trajs: list, values, rewards, mask, kinds: dict[str, str], cfg) -> dict:
    """{(baseline, kind, success): [(mean whitened advantage, share of negative tokens), ...]} for one batch:
    `values`, `rewards`, `mask` [B, T] as the update builds them (`rpr.targets.batch_tensors`), `cfg` an RPRConfig
    (its estimator, gamma and lambda)."""
    from dataclasses import replace

    import torch

    from ..algos.ppo import masked_whiten
    from ..rpr.targets import advantages_for

    const = torch.full_like(values, float(rewards.sum(1).mean()))
    out: dict = {}
    for name, v, at in (("critic", values, "token"), ("turn", values, "turn"), ("const", const, "token")):
        adv, _ = advantages_for(replace(cfg, value_at=at), rewards, v, mask)
        w = masked_whiten(adv, mask)
        for i, t in enumerate(trajs):
            a = w[i][mask[i].bool()]
            if a.numel():
                key = (name, kinds.get(t.task, t.family), int(bool(t.verifier.get("strict"))))
                out.setdefault(key, []).append((float(a.mean()), float((a < 0).float().mean())))
    return out


def turn_credit_rows(trajs: list, values, rewards, mask, cfg) -> dict:
    """{(turn, success, reply): [(mean whitened advantage, mean raw advantage), ...]} for one batch, under the
    stage's own estimator; `reply` is 'command', 'done' or 'unparsed' (the harness could not parse it: it ran nothing).
    A critic-free estimator (`cfg.uses_critic` False) reads no `values` (None will do): each episode's advantage
    is its task's group's, not whitened, as the update uses it (`rpr.targets.group_advantages`)."""
    from ..algos.ppo import masked_whiten
    from ..eval.turns import reply_kinds
    from ..rpr.targets import advantages_for, group_advantages

    if cfg.uses_critic:
        adv, _ = advantages_for(cfg, rewards, values, mask)
        w = masked_whiten(adv, mask)
    else:
        adv, _, _ = group_advantages(cfg, trajs, mask)
        w = adv
    out: dict = {}
    for i, t in enumerate(trajs):
        for k, ((a, b), reply) in enumerate(zip(t.turn_spans, reply_kinds(t))):
            own = mask[i, a:b].bool()
            if not own.any():
                continue
            out.setdefault((k + 1, int(bool(t.verifier.get("strict"))), reply), []).append(
                (float(w[i, a:b][own].mean()), float(adv[i, a:b][own].mean())))
    return out


def turn_table(rows: dict) -> str:
    """One line per (turn, success, reply): replies, mean whitened and raw advantage, replies pushed down."""
    lines = [f"{'turn':>4} {'S':>1} {'reply':8} {'n':>4} {'whitened':>9} {'raw':>7} {'pushed down':>12}"]
    for (turn, s, reply), xs in sorted(rows.items()):
        n = len(xs)
        lines.append(f"{turn:>4} {s:>1} {reply:8} {n:>4} {sum(x[0] for x in xs) / n:>+9.2f} "
                     f"{sum(x[1] for x in xs) / n:>+7.3f} {sum(x[0] < 0 for x in xs):>7}/{n}")
    return "\n".join(lines)


def table(rows: dict) -> str:
    """One line per (kind, success): episodes, then each baseline's mean advantage and negative share."""
    lines = [f"{'kind':44} {'S':>1} {'n':>4}  " + "  ".join(f"{b + ' adv':>10} {'neg':>5}" for b in BASELINES)]
    for kind, s in sorted({(k, s) for _, k, s in rows}):
        cells = []
        for b in BASELINES:
            xs = rows.get((b, kind, s), [])
            n = len(xs) or 1
            cells.append(f"{sum(x[0] for x in xs) / n:>+10.2f} {sum(x[1] for x in xs) / n:>5.2f}")
        lines.append(f"{kind[:44]:44} {s:>1} {len(rows.get(('critic', kind, s), [])):>4}  " + "  ".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    import torch

    from ..policy.critic import values
    from ..rollout.trajectory import read_trajectories
    from ..rpr.batches import kind_map
    from ..rpr.config import RPRConfig
    from ..rpr.stage import load_actor_critic
    from ..rpr.targets import batch_tensors
    from ..tasks.task import find_tasks

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", required=True, help="a finished refinement stage directory (rpr-N)")
    p.add_argument("--pool", required=True, help="its task pool (for the kinds)")
    p.add_argument("--steps", default=":", help="a Python slice of the step directories, e.g. 10: (default all)")
    p.add_argument("--by", choices=("kind", "turn"), default="kind",
                   help="kind: three baselines per kind and outcome; turn: the stage's own, per turn and reply")
    args = p.parse_args(argv)
    run = Path(args.run)
    if not (run / "config.json").exists():
        raise SystemExit(f"{run / 'config.json'}: missing; --run must be a refinement stage directory (rpr-N)")
    cfg = RPRConfig.from_dict(json.loads((run / "config.json").read_text()))
    if not cfg.uses_critic and args.by == "kind":
        raise SystemExit(f"{run / 'config.json'}: estimator {cfg.estimator!r} has no critic; --by kind compares a "
                         "critic's baselines, --by turn reads a critic-free stage's group advantages")
    for need in ("actor", "critic") if cfg.uses_critic else ():
        if not (run / need).exists():
            raise SystemExit(f"{run / need}: missing; --run must be a finished refinement stage")
    kinds = {k: v.split(": ", 1)[-1] for k, v in kind_map(find_tasks(Path(args.pool))).items()}
    policy = load_actor_critic(str(run / "actor"), str(run / "critic")) if cfg.uses_critic else None
    pad = (policy.tokenizer.pad_token_id or 0) if policy else 0  # a critic-free stage reads no token ids
    lo, _, hi = args.steps.partition(":")
    steps = sorted(run.glob("step-*"))[int(lo) if lo else None:int(hi) if hi else None]
    rows: dict = {}
    for step in steps:
        trajs = read_trajectories(step / "trajectories.jsonl")
        ids, att, mask, _, rewards = batch_tensors(trajs, cfg.reward, pad, cfg.reward_timing, cfg.unparsed_penalty)
        v = None
        if policy is not None:
            with torch.no_grad():
                v = torch.cat([values(policy, ids[i:i + 4], att[i:i + 4]) for i in range(0, len(trajs), 4)])
        rows_of = (turn_credit_rows(trajs, v, rewards, mask, cfg) if args.by == "turn"
                   else credit_rows(trajs, v, rewards, mask, kinds, cfg))
        for k, xs in rows_of.items():
            rows.setdefault(k, []).extend(xs)
    source = "the final critic" if cfg.uses_critic else f"{cfg.estimator}'s group advantages (not whitened)"
    out = (f"{run}: steps {steps[0].name}..{steps[-1].name}, {source}\n"
           + (turn_table(rows) if args.by == "turn" else table(rows)))
    print(out)
    return out


if __name__ == "__main__":
    main()
