"""The replay term (`RPRConfig.replay`): the incoming checkpoint's self-rewrite examples, whose NLL each actor
optimizer step of a joint update also lowers, so that the kinds a refinement's batches do not draw keep what the
self-rewrite taught them (InstructGPT's PPO-ptx in kind; a departure from the paper, measured in
docs/experiments.md, 2026-12-07, session 7).

    replay = Replay.load(replay_path(cfg), cfg.replay_batch)
    draws = replay.draws(cfg.seed, step)          # one step's batches, a resumed stage's the same
    nll = replay_backward(policy, next(draws), cfg.replay)
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path


def replay_path(cfg) -> Path:
    """`cfg.replay_from`, or the `dataset.jsonl` beside the stage's incoming actor (`cfg.init`)."""
    return Path(cfg.replay_from) if cfg.replay_from else Path(cfg.init).parent / "dataset.jsonl"


class Replay:
    """A self-rewrite dataset's examples (ids and loss masks) and the seeded draws of their batches."""

    def __init__(self, rows: list[tuple[list[int], list[int]]], batch: int):
        self.rows, self.batch = rows, batch

    @classmethod
    def load(cls, path: Path, batch: int) -> "Replay":
        """Read `path`; a missing file, a row without `input_ids` / `loss_mask`, or no action token at all is an
        error naming the file (and the line)."""
        from ..records import read_jsonl

        if not Path(path).is_file():
            raise FileNotFoundError(f"{path}: missing; RPRConfig.replay reads the incoming checkpoint's self-rewrite "
                                    "dataset (set RPRConfig.replay_from, or replay 0)")
        rows = []
        for i, r in enumerate(read_jsonl(Path(path)), 1):
            ids, mask = r.get("input_ids"), r.get("loss_mask")
            if not isinstance(ids, list) or not isinstance(mask, list) or len(ids) != len(mask):
                raise ValueError(f"{path}, line {i}: 'input_ids' and 'loss_mask' must be lists of one length")
            if any(mask):
                rows.append((ids, mask))
        if not rows:
            raise ValueError(f"{path}: no example with an action token ('loss_mask' all 0 or no rows) to replay")
        return cls(rows, batch)

    def draws(self, seed: int, step: int) -> Iterator[list[tuple[list[int], list[int]]]]:
        """Step `step`'s batches, endless: a seeded shuffle of every example, cut into `batch`-sized batches,
        the few left over dropped, then another shuffle; the same (seed, step) gives the same batches."""
        rng = random.Random(seed * 1_000_003 + step)
        n = min(self.batch, len(self.rows))
        while True:
            order = rng.sample(self.rows, len(self.rows))
            for i in range(0, len(order) - n + 1, n):
                yield order[i:i + n]


def replay_backward(policy, rows: list, weight: float) -> float:
    """Back-propagate `weight` x the mean NLL of `rows`' action tokens under the actor; return that NLL."""
    import torch

    from ..policy.critic import token_logprobs

    width = max(len(ids) for ids, _ in rows)
    pad = policy.tokenizer.pad_token_id
    ids = torch.full((len(rows), width), pad if pad is not None else 0, dtype=torch.long)  # as `update.device_batch`
    att = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for i, (x, m) in enumerate(rows):  # right padding, as the SFT that made the examples
        ids[i, :len(x)], att[i, :len(x)], mask[i, :len(m)] = torch.tensor(x), 1, torch.tensor(m)
    dev = policy.model.device
    ids, att, mask = ids.to(dev), att.to(dev), mask.to(dev)
    lp = token_logprobs(policy, ids, att, only=mask)
    nll = -(lp * mask).sum() / mask.sum().clamp(min=1)
    (weight * nll).backward()
    return float(nll.detach())

