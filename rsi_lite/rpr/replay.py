"""The replay term (`RPRConfig.replay`): the incoming checkpoint's self-rewrite examples, whose NLL each actor
optimizer step of a joint update also lowers, so that the kinds a refinement's batches do not draw keep what the
self-rewrite taught them (InstructGPT's PPO-ptx in kind; a departure from the paper, measured in
docs/experiments.md, 2026-12-07, session 7).

    replay = Replay.load(replay_path(cfg), cfg.replay_batch, by=cfg.replay_by)
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


def example_kind(row: dict) -> str:
    """The kind (`tasks.spec.task_kind`) of a self-rewrite example: its family, the difficulty its task's name ends
    with, and its instruction message (the harness's "Task:" heading dropped)."""
    from ..tasks.spec import task_kind

    text = next(m["content"] for m in row["messages"] if m.get("kind") == "instruction")
    return task_kind(row["family"], str(row["task"]).rsplit("-", 1)[-1], text.removeprefix("Task:").strip())


class Replay:
    """A self-rewrite dataset's examples (ids and loss masks), their kinds, and the seeded draws of their batches:
    by example (each example as often as the others) or by kind (each kind as often as the others, an example
    within its kind in turn), `RPRConfig.replay_by`."""

    def __init__(self, rows: list[tuple[list[int], list[int]]], batch: int, kinds: list[str] | None = None,
                 by: str = "example"):
        self.rows, self.batch, self.by = rows, batch, by
        self.kinds = kinds if kinds is not None else ["" for _ in rows]

    @classmethod
    def load(cls, path: Path, batch: int, by: str = "example") -> "Replay":
        """Read `path`; a missing file, a row without `input_ids` / `loss_mask` (or, by kind, without the `task`,
        `family` and instruction message that name its kind), or no action token at all is an error naming the
        file (and the line)."""
        from ..records import read_jsonl

        if not Path(path).is_file():
            raise FileNotFoundError(f"{path}: missing; RPRConfig.replay reads the incoming checkpoint's self-rewrite "
                                    "dataset (set RPRConfig.replay_from, or replay 0)")
        rows, kinds = [], []
        for i, r in enumerate(read_jsonl(Path(path)), 1):
            ids, mask = r.get("input_ids"), r.get("loss_mask")
            if not isinstance(ids, list) or not isinstance(mask, list) or len(ids) != len(mask):
                raise ValueError(f"{path}, line {i}: 'input_ids' and 'loss_mask' must be lists of one length")
            if not any(mask):
                continue
            rows.append((ids, mask))
            if by == "kind":
                try:
                    kinds.append(example_kind(r))
                except (KeyError, StopIteration, TypeError) as e:
                    raise ValueError(f"{path}, line {i}: replay by kind needs 'task', 'family' and an instruction "
                                     f"message ({type(e).__name__}: {e})") from None
        if not rows:
            raise ValueError(f"{path}: no example with an action token ('loss_mask' all 0 or no rows) to replay")
        return cls(rows, batch, kinds or None, by)

    def draws(self, seed: int, step: int) -> Iterator[list[tuple[list[int], list[int]]]]:
        """Step `step`'s batches, endless; the same (seed, step) gives the same batches. By example: a seeded
        shuffle of every example, cut into `batch`-sized batches, the few left over dropped, then another shuffle.
        By kind: the kinds in a seeded shuffle, again and again, each taking its next example from its own
        shuffled turn, so a kind with 2 examples is replayed as often as one with 25."""
        rng = random.Random(seed * 1_000_003 + step)
        n = min(self.batch, len(self.rows))
        if self.by == "kind":
            yield from self._by_kind(rng, n)
        while True:
            order = rng.sample(self.rows, len(self.rows))
            for i in range(0, len(order) - n + 1, n):
                yield order[i:i + n]

    def _by_kind(self, rng: random.Random, n: int) -> Iterator[list[tuple[list[int], list[int]]]]:
        groups: dict[str, list[int]] = {}
        for i, k in enumerate(self.kinds):
            groups.setdefault(k, []).append(i)
        names = sorted(groups)
        turns = {k: iter(()) for k in names}

        def next_of(k):
            for i in turns[k]:
                return i
            turns[k] = iter(rng.sample(groups[k], len(groups[k])))
            return next(turns[k])

        kinds = iter(())
        while True:
            batch = []
            while len(batch) < n:
                k = next(kinds, None)
                if k is None:
                    kinds = iter(rng.sample(names, len(names)))
                    continue
                batch.append(self.rows[next_of(k)])
            yield batch


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

