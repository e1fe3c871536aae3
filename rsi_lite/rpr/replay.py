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

from ..records import read_json


def replay_path(cfg) -> Path:
    """`cfg.replay_from`, or the `dataset.jsonl` beside the stage's incoming actor (`cfg.init`)."""
    return Path(cfg.replay_from) if cfg.replay_from else Path(cfg.init).parent / "dataset.jsonl"


def replay_source(init: str) -> str:
    """The self-rewrite examples an RPR phase's replay term (`RPRConfig.replay`) keeps its actor near: those of the
    last self-rewrite behind the incoming checkpoint.

        RSR-N's checkpoint   rsr-N/dataset.jsonl; if that stage kept no example (its checkpoint is its incoming
                             one's), the source of its own init (rsr-N/config.json)
        an RPR actor         the examples that stage replayed (its config.json's `replay_from`), else the source of
                             its own incoming checkpoint (the actor retained when a self-rewrite was not)
        anything else        none (""): Base, or a model no stage of the kit made

    A stage directory without the file this needs (a dataset, a config) is an error naming it: a run that should
    replay never quietly becomes one that does not."""
    p = Path(init)
    if p.name == "checkpoint":
        data, cfg = p.parent / "dataset.jsonl", p.parent / "config.json"
        if not data.is_file():
            raise FileNotFoundError(f"{data}: missing; the replay term reads the self-rewrite dataset behind {init} "
                                    "(set RPRConfig.replay_from, or replay 0)")
        if _trainable(data):
            return str(data)
        if not cfg.is_file():
            raise FileNotFoundError(f"{cfg}: missing; {data} holds no example, so the replay term looks behind "
                                    "that stage's own incoming checkpoint, which its config.json names")
        return replay_source(read_json(cfg).get("init", ""))
    if p.name == "actor":
        cfg = p.parent / "config.json"
        if not cfg.is_file():
            raise FileNotFoundError(f"{cfg}: missing; the replay term looks behind {init} through that stage's config")
        doc = read_json(cfg)
        return doc.get("replay_from") or replay_source(doc.get("init", ""))
    return ""


def _trainable(path: Path) -> bool:
    """Whether a self-rewrite dataset holds an example with an action token (an empty stage writes none)."""
    from ..records import read_jsonl

    return any(any(r.get("loss_mask") or ()) for r in read_jsonl(path))


def example_kind(row: dict, where: str) -> str:
    """The kind of a self-rewrite example: its `kind` field (`rsr.clean.Example`), or, in a dataset written before
    that field, `tasks.spec.task_kind` of its family, the difficulty its task's name ends with, and its instruction
    message. `where` (file and line) names the row in the error a row without them raises."""
    from ..harness.prompts import task_instruction
    from ..tasks.spec import task_kind

    if row.get("kind"):
        return row["kind"]
    messages = row.get("messages")
    text = next((m.get("content") for m in messages if isinstance(m, dict) and m.get("kind") == "instruction"),
                None) if isinstance(messages, list) else None
    for name, value in (("task", row.get("task")), ("family", row.get("family")), ("an instruction message", text)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{where}: replay by kind needs 'kind', or 'task', 'family' and an instruction "
                             f"message; {name} is missing")
    return task_kind(row["family"], row["task"].rsplit("-", 1)[-1], task_instruction(text))


def sft_max_len(dataset: Path) -> int | None:
    """The longest example the SFT behind a self-rewrite dataset trained on: `sft.max_len` of the config.json beside
    it (the stage directory that wrote it); None where there is no such config or field (no limit). A field that is
    not a positive integer is an error naming the file."""
    cfg = dataset.parent / "config.json"
    sft = read_json(cfg).get("sft") if cfg.is_file() else None
    value = sft.get("max_len") if isinstance(sft, dict) else None
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{cfg}: 'sft.max_len' must be a positive integer, got {value!r}")
    return value


def cycle(rng: random.Random, items: list) -> Iterator:
    """`items` in a seeded shuffle, again and again: each once before any repeats."""
    while True:
        yield from rng.sample(items, len(items))


class Replay:
    """A self-rewrite dataset's examples (ids and loss masks), their kinds, and the seeded draws of their batches:
    by example (each example as often as the others) or by kind (each kind as often as the others, and within a
    kind each example once before any repeats), `RPRConfig.replay_by`."""

    def __init__(self, rows: list[tuple[list[int], list[int]]], batch: int, kinds: list[str] | None = None,
                 by: str = "example"):
        kinds = kinds if kinds is not None else ["" for _ in rows]
        if len(kinds) != len(rows) or by not in ("example", "kind"):
            raise ValueError(f"Replay: {len(rows)} rows, {len(kinds)} kinds, by {by!r}")
        self.rows, self.batch, self.kinds, self.by = rows, batch, kinds, by

    @classmethod
    def load(cls, path: Path, batch: int, by: str = "example", max_len: int | None = None) -> "Replay":
        """Read `path`; a missing file, a row without `input_ids` / `loss_mask` (or, by kind, without what names
        its kind: `example_kind`), or no action token at all is an error naming the file (and the line). Rows longer
        than `max_len` are left out, as the self-rewrite's SFT left them out (`rsr.sft`); by default the `sft.max_len`
        of the stage that wrote the dataset (`sft_max_len`)."""
        from ..records import read_jsonl

        if not Path(path).is_file():
            raise FileNotFoundError(f"{path}: missing; RPRConfig.replay reads the incoming checkpoint's self-rewrite "
                                    "dataset (set RPRConfig.replay_from, or replay 0)")
        limit = max_len if max_len is not None else sft_max_len(Path(path))
        rows, kinds = [], []
        for i, r in enumerate(read_jsonl(Path(path)), 1):
            ids, mask = r.get("input_ids"), r.get("loss_mask")
            if not isinstance(ids, list) or not isinstance(mask, list) or len(ids) != len(mask):
                raise ValueError(f"{path}, line {i}: 'input_ids' and 'loss_mask' must be lists of one length")
            if any(mask) and (limit is None or len(ids) <= limit):
                rows.append((ids, mask))
                kinds.append(example_kind(r, f"{path}, line {i}") if by == "kind" else "")
        if not rows:
            raise ValueError(f"{path}: no example with an action token ('loss_mask' all 0 or no rows)"
                             + (f" of at most {limit} tokens (sft.max_len)" if limit else "") + " to replay")
        return cls(rows, batch, kinds, by)

    def draws(self, seed: int, step: int) -> Iterator[list[tuple[list[int], list[int]]]]:
        """Step `step`'s batches, endless; the same (seed, step) gives the same batches. By example: a seeded
        shuffle of every example, cut into `batch`-sized batches, the few left over dropped, then another shuffle.
        By kind: the kinds in seeded shuffles, one after another, each kind taking its next example from its own
        shuffles, so a kind with 2 examples is replayed as often as one with 25 (and a batch may hold an example
        of a small kind twice)."""
        rng = random.Random(seed * 1_000_003 + step)
        n = min(self.batch, len(self.rows))
        if self.by == "kind":
            groups: dict[str, list[int]] = {}
            for i, k in enumerate(self.kinds):
                groups.setdefault(k, []).append(i)
            order = cycle(rng, sorted(groups))
            turns = {k: cycle(rng, groups[k]) for k in groups}
            while True:
                yield [self.rows[next(turns[next(order)])] for _ in range(n)]
        else:
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

