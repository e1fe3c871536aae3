"""Continuous batching: requests join and leave the running batch at any decode step.

The lockstep alternative (`generate_batch`) waits for the slowest row of every turn and
re-reads each whole prompt; here an episode whose reply is finished goes off to its
sandbox while the others keep decoding, and comes back with its next prompt as soon as
its command has run. We build on transformers' continuous batching manager (paged KV
cache, chunked prefill, prefix sharing: the system prompt and worked examples that every
episode starts with are computed once and their cache blocks shared), which runs on the
CPU too. The blocks of a finished or cancelled reply stay cached, so an episode's next turn
(its last prompt + reply + the new observation) computes only its new tokens and the last
partial page (checked by a test). What we add: a stop pattern (a reply ends once its code
block is closed; the manager knows only stop tokens, so we watch the streamed tokens and
cancel the request), and keys of our own so that a late token of a cancelled request is
never mistaken for a new one.

Log-probabilities are those of the distribution the token was drawn from (after
temperature and top-p), as in `generate_batch`.
Pitfall: with sampling, which row draws which random number depends on the schedule, so
two runs with the same seed agree only under greedy decoding.
"""

from __future__ import annotations

import math

from .generate import Generation


class Replies:
    """The bookkeeping both continuous generators share (this one and `vllm_backend.VLLMGenerator`).

    Requests get ids of our own mapped to the caller's keys; `update` turns a streamed or final
    output into `(key, Generation)` once the reply is finished: by a stop token, by the token
    budget, or by the stop pattern (a closed code block), in which case the caller's `cancel`
    is called with the request id. Updates of a request already returned yield None.
    """

    def __init__(self, tokenizer, stop_ids: list[int], pattern=None):
        self.tok, self.stop_ids, self.pattern = tokenizer, list(stop_ids), pattern
        self.live: dict[str, object] = {}
        """request id -> the caller's key, for requests not yet returned."""
        self._count = 0

    def new(self, key) -> str:
        rid = f"r{self._count}"
        self._count += 1
        self.live[rid] = key
        return rid

    def update(self, rid: str, toks: list[int], lps: list[float], finished: bool, cancel):
        key = self.live.get(rid)
        if key is None:
            return None
        toks, lps = list(toks), list(lps)[:len(toks)]
        last = toks[-1] if toks else None
        if (self.pattern is not None and last is not None and last not in self.stop_ids
                and "`" in self.tok.decode([last]) and self.pattern.search(self.tok.decode(toks, skip_special_tokens=True))):
            if not finished:
                cancel(rid)
            del self.live[rid]
            return key, Generation(toks, lps, "pattern")
        if not finished:
            return None
        del self.live[rid]
        return key, Generation(toks, lps, "stop" if last in self.stop_ids else "length")


class ContinuousGenerator:
    """`submit(key, prompt_ids)`, then `poll()` yields `(key, Generation)` as replies finish."""

    def __init__(self, model, tokenizer, *, max_new_tokens: int, temperature: float = 0.6, top_p: float = 1.0,
                 stop_ids: list[int] | None = None, stop_pattern=None, seed: int = 0, max_concurrent: int = 16,
                 context_budget: int = 2048, max_batch_tokens: int = 512, page_size: int = 64):
        from transformers import GenerationConfig
        from transformers.generation.configuration_utils import ContinuousBatchingConfig

        self._replies = Replies(tokenizer, stop_ids or [tokenizer.eos_token_id], stop_pattern)
        self.stop_ids, self.pattern = self._replies.stop_ids, stop_pattern
        self.max_new_tokens = max_new_tokens
        sample = temperature > 0
        gen_cfg = GenerationConfig(
            max_new_tokens=max_new_tokens, do_sample=sample, eos_token_id=self.stop_ids,
            pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
            **({"temperature": temperature, "top_p": top_p, "top_k": 0} if sample else {}))
        # room for every concurrent episode's whole context, plus one spare of each for prefix blocks
        blocks = (max_concurrent + 1) * (math.ceil(context_budget / page_size) + 1)
        cb_cfg = ContinuousBatchingConfig(return_logprobs=True, num_blocks=blocks, page_size=page_size,
                                          max_batch_tokens=max_batch_tokens, seed=seed)
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        self._manager = base.init_continuous_batching(generation_config=gen_cfg, continuous_batching_config=cb_cfg)

    def __enter__(self):
        self._manager.start()
        return self

    def __exit__(self, *exc):
        self._manager.stop(block=True, timeout=60)
        return False

    @property
    def busy(self) -> int:
        """Requests submitted and not yet returned."""
        return len(self._replies.live)

    def submit(self, key, prompt_ids: list[int]) -> None:
        rid = self._replies.new(key)
        self._manager.add_request(list(prompt_ids), request_id=rid, max_new_tokens=self.max_new_tokens,
                                  streaming=self.pattern is not None, eos_token_id=self.stop_ids)

    def poll(self, timeout: float = 0.05):
        """Yield `(key, Generation)` for each reply finished since the last call (waits up to `timeout` once)."""
        out = self._manager.get_result(timeout=timeout)
        while out is not None:
            done = self._finished(out)
            if done is not None:
                yield done
            out = self._manager.get_result(timeout=0)
        err = self._manager.background_thread_status.fatal_error if hasattr(self._manager, "background_thread_status") else None
        if err is not None:
            raise RuntimeError(f"continuous batching stopped: {err}")

    def _finished(self, out):
        if out.request_id in self._replies.live and out.error:
            raise RuntimeError(f"generation failed for request {out.request_id}: {out.error}")
        # without a stop pattern nothing is streamed: every output is final
        return self._replies.update(out.request_id, out.generated_tokens, out.logprobs,
                                    out.is_finished() or self.pattern is None, self._manager.cancel_request)
