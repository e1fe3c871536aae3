"""What every generation engine returns, and the bookkeeping the continuous engines share.

`Generation` is one reply with its token ids and the log-probability of each sampled token; `Replies` maps
the engines' request ids to the caller's keys and decides when a streamed reply is finished; `common_prefix` is
how the engines find the tokens prompts share; `request_seed` seeds a served request. The engines
(`hf_generate`, `hf_continuous`, `ct2_engine`, `vllm_engine`, `remote_engine`) import these; none imports another
engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def request_seed(seed: int, n: int) -> int:
    """The seed of the n-th request of a generator seeded `seed`, for engines that seed each request's sampler
    (vLLM's `SamplingParams.seed`, a completions server's `seed`): one seed shared by every request would give
    identical prompts identical replies (evaluation's k runs of a task, self-rewrite's discovery samples), so each
    request gets its own, a function of the generator's seed and the request's number, and a run is still
    reproducible. Distinct for the first 2**20 requests of a generator, and between generators whose seeds differ
    (`dispatch.complete` gives each chunk `seed + start`)."""
    return (seed * 2**20 + n) % 2**31


@dataclass
class Generation:
    token_ids: list[int]
    """The sampled tokens, the stop token included when one was produced."""
    logprobs: list[float] = field(default_factory=list)
    """One per token in `token_ids`."""
    finish_reason: str = "length"
    """'stop' (a stop token was produced) or 'length' (max_new_tokens reached)."""


class Replies:
    """The bookkeeping both continuous generators share (this one and `vllm_engine.VLLMGenerator`).

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


def common_prefix(prompts: list[list[int]]) -> list[int]:
    """The longest prefix all prompts share."""
    if not prompts:
        return []
    first, n = prompts[0], min(map(len, prompts))
    for i in range(n):
        t = first[i]
        if any(p[i] != t for p in prompts):
            return first[:i]
    return first[:n]
