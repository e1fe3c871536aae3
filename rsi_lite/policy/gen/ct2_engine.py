"""CTranslate2 as a generation backend on the CPU, behind the interface the rollout engine drives.

Like `hf_continuous.ContinuousGenerator` (transformers) and `vllm_engine.VLLMGenerator`, the
`CT2Generator` offers `submit(key, prompt_ids)`, `poll()` -> `(key, Generation)` and `busy`,
and is used as a context manager, so the harnesses, sandboxes and trajectories do not change.

The weights follow the actor: `ct2_weights.served_model(policy)` gives the generator CTranslate2 model of
the policy's current weights (merged, converted when they change, cached by content).

How requests are batched. CTranslate2 runs a batch of prompts to the end of its longest
reply (`generate_batch`); it has no continuous batching. Requests submitted while a batch
runs wait for it, then start together as the next wave. Two things keep prefill down:
- The prompt prefix every episode shares (system prompt, worked examples) is passed as
  `static_prompt`: computed once, its cache reused by every later batch.
- In a batch of prompts of different lengths, CTranslate2 feeds each row's tokens past the
  shortest prompt one decode step at a time. So a wave is split into groups of prompts whose
  lengths (after the shared prefix) differ by at most `spread` tokens (default half the reply
  budget: merging two groups saves one group's decode steps, which a wider spread would spend
  again on feeding prompt tokens one at a time).
What CTranslate2 cannot do: keep an episode's earlier turns cached between its turns. Every
turn prefills the episode's whole context again after the shared prefix (the continuous
transformers engine does not). `python -m rsi_lite.bench.rollout` measures what that costs.

Log-probabilities follow `Generation`'s contract: those of the distribution the token was drawn
from. CTranslate2 reports the temperature-1 log-softmax; at temperature 1 and top-p 1 (PPO's
rollouts) that is the contract, otherwise each step's logits are asked for and the
log-probability is computed here after temperature and top-p (`processed_logprob`).

`ctranslate2` is an optional dependency (`pip install -e .[fast]`); nothing here imports it
until a generator or a served model is built, and without it `served_model` says what to install.
"""

from __future__ import annotations

import contextlib
import math
import queue
import threading
import time

from .ct2_weights import _ct2, available, served_model, stats
from .types import Replies, common_prefix

__all__ = ["CT2Generator", "available", "common_prefix", "length_groups", "processed_logprob", "served_model",
           "stats"]

# ---------------------------------------------------------------------------------------------------------------
# Log-probabilities after temperature and top-p

def processed_logprob(logits, token: int, temperature: float, top_p: float) -> float:
    """log p(token) under softmax(logits / temperature) restricted to the top-p nucleus and renormalised
    (what the sampler drew from). `logits`: one step's vocabulary scores (any array)."""
    import numpy as np

    z = np.asarray(logits, dtype=np.float64).reshape(-1)
    if temperature > 0:
        z = z / temperature
    z = z - z.max()
    logp = z - math.log(np.exp(z).sum())
    if top_p >= 1.0:
        return float(logp[token])
    order = np.argsort(-logp)
    cum = np.cumsum(np.exp(logp[order]))
    keep = order[:int(np.searchsorted(cum, top_p) + 1)]
    kept = logp[keep]
    if not (keep == token).any():
        return float(logp[token])
    return float(logp[token] - (kept.max() + math.log(np.exp(kept - kept.max()).sum())))


# ---------------------------------------------------------------------------------------------------------------
# The generator

def length_groups(lengths: list[int], spread: int) -> list[list[int]]:
    """Indices grouped so that within a group lengths differ by at most `spread`; shortest first.

    >>> length_groups([30, 5, 8, 40, 31], 4)
    [[1, 2], [0, 4], [3]]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and lengths[i] - lengths[groups[-1][0]] <= spread:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


class CT2Generator:
    """The `ContinuousGenerator` interface over a CTranslate2 generator (see the module docstring)."""

    def __init__(self, model, tokenizer, *, max_new_tokens: int, temperature: float = 0.6, top_p: float = 1.0,
                 stop_ids: list[int] | None = None, stop_pattern=None, seed: int = 0, max_concurrent: int = 16,
                 spread: int | None = None, **_ignored):
        ct2 = _ct2()
        self.model, self.tok = model, tokenizer
        self._replies = Replies(tokenizer, stop_ids or [tokenizer.eos_token_id], stop_pattern)
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.max_concurrent = max_concurrent
        self.spread = max_new_tokens // 2 if spread is None else spread
        self.prefix: list[int] | None = None
        """The shared prompt prefix passed as `static_prompt`, fixed by the first wave of two or more prompts."""
        self._pending: list[tuple[str, list[int]]] = []
        self._done: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._rows: dict[str, dict] = {}
        self._batches: list = []
        self._closing = False
        self.waves: list[dict] = []
        """One entry per wave: prompts, groups, shared prefix length, tokens fed after it, seconds, tokens out."""
        ct2.set_random_seed(seed)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._closing = True  # every row's next callback stops it
        for b in self._batches:
            with contextlib.suppress(Exception):
                b.result()
        self._batches.clear()
        return False

    @property
    def busy(self) -> int:
        with self._lock:
            return len(self._replies.live)

    def submit(self, key, prompt_ids: list[int]) -> None:
        with self._lock:
            rid = self._replies.new(key)
            self._pending.append((rid, list(prompt_ids)))

    def poll(self, timeout: float = 0.05):
        """Start the next wave if the last has finished; yield `(key, Generation)` for each reply finished since
        the last call (waits up to `timeout` once)."""
        self._launch()
        try:
            item = self._done.get(timeout=timeout)
        except queue.Empty:
            item = None
        while item is not None:
            if isinstance(item, BaseException):
                raise RuntimeError(f"ctranslate2 generation failed: {item}") from item
            yield item
            try:
                item = self._done.get_nowait()
            except queue.Empty:
                item = None
        self._launch()

    def forward_stats(self) -> dict:
        """The engine's busy seconds (each wave from its start to its last reply), the prompt tokens it computed
        (the shared prefix once, the rest of every prompt) and the tokens it generated."""
        waves = [w for w in self.waves if w["seconds"] is not None]
        return {"forward_s": sum(w["seconds"] for w in waves),
                "prefill_tokens": sum(w["fed"] for w in waves) + (len(self.prefix) if self.prefix else 0),
                "decode_tokens": sum(w["generated"] for w in waves)}

    # -- internals -----------------------------------------------------------------------------------------------

    def _launch(self) -> None:
        with self._lock:
            self._batches = [b for b in self._batches if not b.done()] if self._batches else []
            if self._rows or not self._pending:
                return
            wave, self._pending = self._pending[:self.max_concurrent], self._pending[self.max_concurrent:]
            if self.prefix is None and len(wave) > 1:
                self.prefix = common_prefix([p for _, p in wave])
            prefix = self.prefix or []
            shared = [p[:len(prefix)] == prefix and len(p) > len(prefix) for _, p in wave]
            rests = [p[len(prefix):] if s else p for (_, p), s in zip(wave, shared)]
            for (rid, _), rest in zip(wave, rests):
                self._rows[rid] = {"toks": [], "lps": []}
            groups = []
            for use_prefix in (True, False):
                idx = [i for i, s in enumerate(shared) if s == use_prefix]
                for g in length_groups([len(rests[i]) for i in idx], self.spread):
                    groups.append(([idx[j] for j in g], use_prefix))
            self.waves.append({"prompts": len(wave), "groups": len(groups), "prefix": len(prefix),
                               "fed": sum(map(len, rests)), "start": time.perf_counter(), "seconds": None,
                               "generated": 0})
        for members, use_prefix in groups:
            self._start([wave[i][0] for i in members], [rests[i] for i in members], prefix if use_prefix else None)

    def _start(self, rids: list[str], prompts: list[list[int]], prefix: list[int] | None) -> None:
        sample = self.temperature > 0
        need_logits = sample and (self.temperature != 1.0 or self.top_p < 1.0)
        kw = dict(max_length=self.max_new_tokens, include_prompt_in_result=False, end_token=self._replies.stop_ids,
                  return_end_token=True, return_scores=True, return_logits_vocab=need_logits,
                  sampling_topk=0 if sample else 1, sampling_topp=self.top_p if sample else 1.0,
                  sampling_temperature=self.temperature if sample else 1.0, asynchronous=True,
                  callback=lambda step: self._step(rids, step, need_logits))
        if prefix:
            kw["static_prompt"] = self.tok.convert_ids_to_tokens(prefix)
        tokens = [self.tok.convert_ids_to_tokens(p) for p in prompts]
        self._batches += self.model.generate_batch(tokens, **kw)

    def _step(self, rids: list[str], step, need_logits: bool) -> bool:
        """CTranslate2's per-token callback (its own thread): record the token; True stops this row."""
        try:
            rid = rids[step.batch_id]
            with self._lock:
                row = self._rows.get(rid)
                if row is None:
                    return True
                tok = int(step.token_id)
                lp = (processed_logprob(step.logits, tok, self.temperature, self.top_p) if need_logits
                      else float(step.log_prob))
                row["toks"].append(tok)
                row["lps"].append(lp)
                finished = bool(step.is_last) or tok in self._replies.stop_ids or len(row["toks"]) >= self.max_new_tokens
                done = self._replies.update(rid, row["toks"], row["lps"], finished, lambda _rid: None)
                if done is not None:
                    del self._rows[rid]
                    wave = self.waves[-1]
                    wave["generated"] += len(done[1].token_ids)
                    if not self._rows:
                        wave["seconds"] = time.perf_counter() - wave["start"]
                    self._done.put(done)
                    return True
                return self._closing
        except BaseException as e:  # surfaced by the next poll()
            self._done.put(e)
            return True
