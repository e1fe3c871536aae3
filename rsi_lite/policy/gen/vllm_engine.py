"""vLLM as the generation backend, behind the interface the rollout engine already uses.

`ContinuousGenerator` (transformers, the laptop) and `VLLMGenerator` (vLLM, GPUs) both
offer `submit(key, prompt_ids)`, `poll()` -> `(key, Generation)` and `busy`, and are used
as context managers; `rollout.run_episodes` drives the vLLM one when the policy is a
`VLLMPolicy` (the continuous engine), and the harnesses, the sandboxes and the trajectories do not change.

The engine is vLLM's `LLMEngine` (`add_request` / `step` / `abort_request`), built once
per process by `vllm_engine()` with LoRA enabled: the actor is the base model plus the
adapter directory the trainer saved last (`save_actor`), passed with every request as a
`LoRARequest` whose integer id changes whenever the directory does, so vLLM loads the new
weights without a restart. Log-probabilities are asked for after temperature and top-p
(`logprobs_mode="processed_logprobs"`), which is what `Generation.logprobs` promises; at
temperature 1 and top-p 1 (PPO's rollouts) both modes agree. `vllm_policy` builds one for the actor a
stage starts from ('base' or a saved adapter): scale_up's evaluation and self-rewrite jobs use it on a GPU node
(`scale_up.loading`).

The `vllm` wheel on PyPI is CUDA-only: nothing here imports it until a `VLLMPolicy` is built.
The kit's CPU tests check that asking for it without vLLM fails with a clear error, and run
the rollout engine through `VLLMGenerator` against a stand-in engine with the same surface
(tests/rollout/test_engine.py); the first GPU run must confirm the request and output fields used
below against the installed vLLM version. The request bookkeeping (keys, the stop pattern,
finish reasons) is shared with `ContinuousGenerator` (`types.Replies`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .types import Replies, request_seed


def _vllm():
    try:
        import vllm
    except ImportError as e:
        raise RuntimeError("the vLLM backend needs the vllm package (CUDA only: `pip install vllm` on a GPU "
                           "node); without it, generation runs on the policy's own model (transformers)") from e
    return vllm


def vllm_engine(model: str, *, tensor_parallel: int = 1, max_model_len: int = 32768, max_lora_rank: int = 64,
                gpu_memory_utilization: float = 0.85, seed: int = 0, dtype: str = "auto"):
    """One vLLM engine for a local model directory, LoRA enabled (one adapter at a time: the actor). `dtype`:
    the weights' precision ('auto': the model config's, vLLM's default; 'bfloat16' holds a float32 checkpoint
    at half its size)."""
    vllm = _vllm()
    args = vllm.EngineArgs(model=str(model), tensor_parallel_size=tensor_parallel, max_model_len=max_model_len,
                           enable_lora=True, max_loras=1, max_lora_rank=max_lora_rank, seed=seed,
                           gpu_memory_utilization=gpu_memory_utilization, logprobs_mode="processed_logprobs",
                           enable_prefix_caching=True, dtype=dtype)
    return vllm.LLMEngine.from_engine_args(args)


LORA_SLOTS = (8, 16, 32, 64, 128, 256, 512)
"""Ranks vLLM accepts as `max_lora_rank` (its `LoRAConfig` refuses others; recent versions add a few, these are
in every version's list)."""


def adapter_rank(adapter: str | Path) -> int:
    """The rank of the saved adapter in directory `adapter` (`r` in its adapter_config.json)."""
    path = Path(adapter) / "adapter_config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (a stage's init is 'base' or a saved adapter)")
    r = json.loads(path.read_text()).get("r")
    if not isinstance(r, int) or isinstance(r, bool) or r < 1:
        raise ValueError(f"{path}: field 'r' is {r!r}, expected the adapter's rank (a positive integer)")
    return r


def lora_slot(adapter: str | Path | None) -> int:
    """The `max_lora_rank` that serves the saved adapter in directory `adapter` (None: no adapter): the smallest of
    `LORA_SLOTS` at least its rank; vLLM reserves that rank for the adapter on the GPU."""
    r = adapter_rank(adapter) if adapter else 1
    for slot in LORA_SLOTS:
        if r <= slot:
            return slot
    raise ValueError(f"{Path(adapter) / 'adapter_config.json'}: rank {r} is above the largest vLLM serves "
                     f"({LORA_SLOTS[-1]})")


def vllm_policy(init: str, model: str, *, max_model_len: int, gpu_memory_utilization: float = 0.85,
                dtype: str = "bfloat16", seed: int = 0) -> "VLLMPolicy":
    """The actor a stage starts from (`init`: 'base', or a saved adapter directory, as `policy.actor.load_actor`
    takes it) served by one vLLM engine on this GPU: the base model's weights in `dtype`, the adapter as a
    `LoRARequest`. Generation only: nothing here trains (a stage that fine-tunes loads `load_actor`)."""
    from ..model import policy_tokenizer, resolve_model

    path = resolve_model(model)
    adapter = None if init == "base" else str(init)
    rank = lora_slot(adapter)
    engine = vllm_engine(path, max_model_len=max_model_len, max_lora_rank=rank,
                         gpu_memory_utilization=gpu_memory_utilization, seed=seed, dtype=dtype)
    return VLLMPolicy(tokenizer=policy_tokenizer(path), engine=engine, adapter=adapter)


@dataclass
class VLLMPolicy:
    """What the rollout engine needs from a policy served by vLLM: the tokenizer, the engine, the adapter."""

    tokenizer: object
    engine: object
    adapter: str | None = None
    """The actor's LoRA directory (adapter_config.json inside); None: the base model."""

    def lora_request(self):
        if not self.adapter:
            return None
        from vllm.lora.request import LoRARequest

        path = Path(self.adapter)
        # a new id whenever the saved weights change, so vLLM does not reuse the cached adapter
        version = int((path / "adapter_config.json").stat().st_mtime_ns % 2_000_000_000) + 1
        return LoRARequest("actor", version, str(path))


class VLLMGenerator:
    """The `ContinuousGenerator` interface over a vLLM `LLMEngine` (see the module docstring)."""

    def __init__(self, policy: VLLMPolicy, *, max_new_tokens: int, temperature: float = 0.6, top_p: float = 1.0,
                 stop_ids: list[int] | None = None, stop_pattern=None, seed: int = 0, **_ignored):
        vllm = _vllm()
        self.engine = policy.engine
        self._replies = Replies(policy.tokenizer, stop_ids or [policy.tokenizer.eos_token_id], stop_pattern)
        self.lora = policy.lora_request()
        self._sampling = vllm.SamplingParams
        self._params = dict(temperature=temperature, top_p=top_p, max_tokens=max_new_tokens,
                            stop_token_ids=self._replies.stop_ids, logprobs=0, detokenize=False)
        self.seed = seed
        self._submitted = 0

    def request_seed(self, n: int) -> int:
        """The seed of this generator's n-th request (`types.request_seed`: vLLM seeds each request's sampler)."""
        return request_seed(self.seed, n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._replies.live:
            self.engine.abort_request(list(self._replies.live))
            self._replies.live.clear()
        return False

    @property
    def busy(self) -> int:
        return len(self._replies.live)

    def submit(self, key, prompt_ids: list[int]) -> None:
        rid = self._replies.new(key)
        params = self._sampling(**self._params, seed=self.request_seed(self._submitted))
        self._submitted += 1
        self.engine.add_request(rid, {"prompt_token_ids": list(prompt_ids)}, params, lora_request=self.lora)

    def poll(self, timeout: float = 0.05):
        """One engine step; yield `(key, Generation)` for each reply it finished (vLLM steps synchronously,
        so `timeout` is not needed: a step returns when its tokens are computed)."""
        if not self.engine.has_unfinished_requests():
            return
        for out in self.engine.step():
            comp = out.outputs[0]
            # logprobs=0: each position's dict holds the sampled token's only
            lps = [d[t].logprob for t, d in zip(comp.token_ids, comp.logprobs or [])]
            done = self._replies.update(out.request_id, comp.token_ids, lps, out.finished,
                                        lambda rid: self.engine.abort_request([rid]))
            if done is not None:
                yield done
