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

On the CPU the manager's attention is `sdpa` over the whole batch at once: the queries of
all requests against the keys of all requests, with a block-diagonal mask. At 16 slots
each decoded token then attends to sixteen contexts, fifteen of them masked out, and that
costs more than the model's own layers. While a generator runs we therefore route `sdpa`
calls that carry the manager's sequence bounds (`cu_seq_lens_q`/`cu_seq_lens_k`) through
`varlen_sdpa`, one attention call per request on its own keys; every other call, and every
device other than the CPU, keeps the stock function. Same replies, faster decoding, and the
gain grows with the context, since the stock call's cost grows with slots x total context
(measured: docs/history.md).

Log-probabilities are those of the distribution the token was drawn from (after
temperature and top-p), as in `generate_batch`.
Pitfall: with sampling, which row draws which random number depends on the schedule, so
two runs with the same seed agree only under greedy decoding.
"""

from __future__ import annotations

import functools
import math
import threading

from .types import Replies


def varlen_sdpa(module, query, key, value, attention_mask, dropout: float = 0.0, scaling: float | None = None,
                **kwargs):
    """Attention of a packed batch, one request at a time: what flash attention's varlen kernel does on a GPU.

    query [1, heads, Tq, d], key/value [1, kv_heads, Tk, d] hold the requests one after another,
    bounded by `cu_seq_lens_q` and `cu_seq_lens_k`; `attention_mask` [1, 1, Tq, Tk] is the
    manager's additive block-diagonal mask. Request i's queries attend only to its own keys,
    through its diagonal block of the mask (none for a single decoded token, which sees all
    its keys). Returns [1, Tq, heads, d] like transformers' `sdpa_attention_forward`, which
    handles every call without the bounds.
    """
    import torch
    import torch.nn.functional as F
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    cu_q, cu_k = kwargs.get("cu_seq_lens_q"), kwargs.get("cu_seq_lens_k")
    if not (torch.is_tensor(cu_q) and torch.is_tensor(cu_k)) or query.shape[0] != 1 or attention_mask is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    cq, ck = cu_q.tolist(), cu_k.tolist()
    outs = []
    for i in range(len(cq) - 1):
        qs, qe, ks, ke = cq[i], cq[i + 1], ck[i], ck[i + 1]
        if qe > qs:
            mask = None if qe - qs == 1 else attention_mask[..., qs:qe, ks:ke]
            outs.append(F.scaled_dot_product_attention(query[:, :, qs:qe], key[:, :, ks:ke], value[:, :, ks:ke],
                                                       attn_mask=mask, scale=scaling, enable_gqa=True))
    pad = query.shape[2] - cq[-1]  # padded query rows past the last request (static shapes): zeros
    if pad:
        outs.append(query.new_zeros(*query.shape[:2], pad, value.shape[3]))
    return torch.cat(outs, dim=2).transpose(1, 2).contiguous(), None


class _VarlenRoute:
    """Routes transformers' `sdpa` through `varlen_sdpa` while at least one CPU generator runs."""

    _lock, _users = threading.Lock(), 0

    @classmethod
    def enter(cls):
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        with cls._lock:
            if cls._users == 0:
                ALL_ATTENTION_FUNCTIONS["sdpa"] = varlen_sdpa
            cls._users += 1

    @classmethod
    def leave(cls):
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        with cls._lock:
            cls._users -= 1
            if cls._users == 0:
                del ALL_ATTENTION_FUNCTIONS["sdpa"]


class ForwardMeter:
    """Counts what a model's forward passes computed: a benchmark's view of the batches a generator built.

    `with ForwardMeter(model) as m: ...` wraps the (base) model's `forward` for the block. For each
    call it records the wall seconds, how many requests decoded one token and how many tokens were
    prefilled; a continuous-batching call says where its requests begin and end (`cu_seq_lens_q`).
    A call without the bounds (`model.generate`) counts each row of its batch as one request.
    The wrapper keeps `forward`'s signature: transformers' continuous batching reads it to decide
    whether the model can project only the positions it samples from onto the vocabulary
    (`logits_to_keep`), and a bare `(*args, **kwargs)` made it project every prefilled token.
    """

    def __init__(self, model):
        self.model = model.get_base_model() if hasattr(model, "get_base_model") else model
        self.calls: list[dict] = []

    def __enter__(self):
        import time

        real = self.model.forward

        @functools.wraps(real)  # the signature stays visible (see the docstring)
        def forward(*args, **kwargs):
            t0 = time.perf_counter()
            out = real(*args, **kwargs)
            self.calls.append({**self._shape(kwargs), "seconds": time.perf_counter() - t0})
            return out

        self._own = "forward" in vars(self.model)  # an instance attribute already (a hook's wrapper): put it back
        self._real, self.model.forward = real, forward
        return self

    def __exit__(self, *exc):
        if self._own:
            self.model.forward = self._real
        else:
            del self.model.forward  # the class's own forward again
        return False

    @staticmethod
    def _shape(kwargs) -> dict:
        import torch

        ids, cu = kwargs.get("input_ids"), kwargs.get("cu_seq_lens_q")
        if torch.is_tensor(cu):
            bounds = cu.tolist()
            lens = [b - a for a, b in zip(bounds, bounds[1:])]
            return {"decode": sum(n == 1 for n in lens), "prefill": sum(n for n in lens if n > 1)}
        rows, width = (ids.shape[0], ids.shape[-1]) if torch.is_tensor(ids) else (0, 0)
        return {"decode": rows if width == 1 else 0, "prefill": rows * width if width > 1 else 0}

    def summary(self, wall: float | None = None) -> dict:
        """Forwards, their seconds (and share of `wall`), tokens prefilled, and the mean requests decoding per
        forward that decoded any (the batch occupancy: at most the slot count)."""
        dec = [c["decode"] for c in self.calls if c["decode"]]
        out = {"forwards": len(self.calls), "forward_s": sum(c["seconds"] for c in self.calls),
               "prefill_tokens": sum(c["prefill"] for c in self.calls),
               "decode_tokens": sum(dec), "decode_forwards": len(dec),
               "mean_decode_rows": sum(dec) / len(dec) if dec else 0.0}
        if wall:
            out["forward_share"] = out["forward_s"] / wall
        return out


def cache_blocks(max_concurrent: int, context_budget: int, page_size: int) -> int:
    """Pages of the manager's key/value cache: room for every concurrent episode's whole context and one spare
    context, each with one page more (for prefix blocks). `scale_up.memory` counts a GPU's cache by it."""
    return (max_concurrent + 1) * (math.ceil(context_budget / page_size) + 1)


class ContinuousGenerator:
    """`submit(key, prompt_ids)`, then `poll()` yields `(key, Generation)` as replies finish."""

    def __init__(self, model, tokenizer, *, max_new_tokens: int, temperature: float = 0.6, top_p: float = 1.0,
                 stop_ids: list[int] | None = None, stop_pattern=None, seed: int = 0, max_concurrent: int = 16,
                 context_budget: int = 2048, max_batch_tokens: int = 512, page_size: int = 64,
                 per_request_attention: bool = True):
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
        blocks = cache_blocks(max_concurrent, context_budget, page_size)
        cb_cfg = ContinuousBatchingConfig(return_logprobs=True, num_blocks=blocks, page_size=page_size,
                                          max_batch_tokens=max_batch_tokens, seed=seed)
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        self._manager = base.init_continuous_batching(generation_config=gen_cfg, continuous_batching_config=cb_cfg)
        self._varlen = (per_request_attention and base.device.type == "cpu"
                        and base.config._attn_implementation == "sdpa")
        """Route the manager's attention through `varlen_sdpa` (see the module docstring)."""

    def __enter__(self):
        if self._varlen:
            _VarlenRoute.enter()
        try:
            self._manager.start()
        except BaseException:
            if self._varlen:
                _VarlenRoute.leave()
            raise
        return self

    def __exit__(self, *exc):
        import logging

        # a manager that never received a request has no batch processor, and transformers warns about it at
        # stop ("Batch processor was not initialized"): expected here (an engine opened for nothing), so quiet
        log = logging.getLogger("ContinuousBatchingLogger")
        level = log.level
        if getattr(self._manager, "batch_processor", True) is None:
            log.setLevel(logging.ERROR)
        try:
            self._manager.stop(block=True, timeout=60)
        finally:
            log.setLevel(level)
            if self._varlen:
                _VarlenRoute.leave()
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
