"""Which engine serves the policy's generation: one setting, dispatched here and nowhere else.

    native        the kit's own decode loop over the policy's modules (`native_engine`): each episode's cache
                  kept between turns, one packed forward a step. The fastest on a CPU.
    transformers  the policy's own model through transformers' continuous batching (`hf_continuous`): the
                  reference, and the fallback for a model whose attention `native_engine` does not serve
    ctranslate2   a compiled CPU engine serving the merged actor weights (`ct2_engine`)
    vllm          a vLLM engine on GPUs (`vllm_engine`; the policy is a `VLLMPolicy`)
    remote        servers of vLLM's completions API elsewhere: verl's rollout replicas on a cluster, the kit's
                  `scale_up.kit_server` on a CPU (`remote_engine`; the policy is a `RemotePolicy`)
    auto          vllm for a `VLLMPolicy`, remote for a `RemotePolicy`, else native where it serves the model,
                  else transformers

Why native and not CTranslate2 on the CPU: multi-turn episodes give prompts of many lengths, and CTranslate2
prefills only up to the shortest prompt of a batch, feeding every other prompt's remaining tokens one decode
step at a time, and keeps no episode's earlier turns between calls; on the rollout benchmark
(`python -m rsi_lite.bench.rollout`) it was no faster than the transformers engine, and native is several times
faster than both (docs/experiments.md). Ask for CTranslate2 by name where prompts are alike in length.

Every backend's generator offers `submit(key, prompt_ids)`, `poll()` -> `(key, Generation)`, `busy`, and is a
context manager, so `rollout.run_episodes` and `complete` drive them all the same way; a generator that keeps
each key's cache also offers `release(key)`.
"""

from __future__ import annotations

from .types import Generation

BACKENDS = ("auto", "native", "transformers", "ctranslate2", "vllm", "remote")


def is_vllm(policy) -> bool:
    from .vllm_engine import VLLMPolicy

    return isinstance(policy, VLLMPolicy)


def generation_only(policy) -> bool:
    """A policy that can generate and not train: served by vLLM here or by remote servers."""
    return is_vllm(policy) or is_remote(policy)


def is_remote(policy) -> bool:
    from .remote_engine import RemotePolicy

    return isinstance(policy, RemotePolicy)


def resolve_backend(policy, name: str = "auto") -> str:
    """The backend `name` means for this policy; a clear error for an unknown or impossible one."""
    if name not in BACKENDS:
        raise ValueError(f"generation_backend: {name!r} is not one of {', '.join(BACKENDS)}")
    if is_remote(policy):
        if name not in ("auto", "remote"):
            raise ValueError(f"generation_backend {name!r}: this policy is served remotely (a RemotePolicy)")
        return "remote"
    if name == "remote":
        raise ValueError("generation_backend 'remote' needs a RemotePolicy (`remote_engine.remote_policy`); "
                         "this policy is a local model")
    if is_vllm(policy):
        if name not in ("auto", "vllm"):
            raise ValueError(f"generation_backend {name!r}: this policy is served by vLLM (a VLLMPolicy)")
        return "vllm"
    if name == "vllm":
        raise ValueError("generation_backend 'vllm' needs a VLLMPolicy (scale_up/); this policy is a local model")
    if name == "auto":
        from .native_engine import supports

        return "native" if supports(policy.model) else "transformers"
    return name


def make_generator(policy, backend: str = "auto", *, max_new_tokens: int, temperature: float = 0.6,
                   top_p: float = 1.0, stop_ids=None, stop_pattern=None, seed: int = 0, max_concurrent: int = 16,
                   context_budget: int = 2048, page_size: int = 64, compute_type: str = "float32",
                   cache_slots: int = 0):
    """A continuous generator for `policy` on `backend` (see the module docstring)."""
    kw = dict(max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, stop_ids=stop_ids,
              stop_pattern=stop_pattern, seed=seed, max_concurrent=max_concurrent)
    backend = resolve_backend(policy, backend)
    if backend == "remote":
        from .remote_engine import RemoteGenerator

        return RemoteGenerator(policy, **kw)
    if backend == "vllm":
        from .vllm_engine import VLLMGenerator

        return VLLMGenerator(policy, **kw)
    if backend == "ctranslate2":
        from .ct2_engine import CT2Generator
        from .ct2_weights import served_model

        return CT2Generator(served_model(policy, compute_type=compute_type), policy.tokenizer, **kw)
    if backend == "native":
        from .native_engine import NativeGenerator

        return NativeGenerator(policy.model, policy.tokenizer, context_budget=context_budget, cache_slots=cache_slots,
                               **kw)
    from .hf_continuous import ContinuousGenerator

    return ContinuousGenerator(policy.model, policy.tokenizer, context_budget=context_budget, page_size=page_size, **kw)


def complete(policy, prompts: list[list[int]], *, max_new_tokens: int, temperature: float = 0.0, seed: int = 0,
             batch: int = 16, backend: str = "auto") -> list[Generation]:
    """One reply per prompt from whatever serves the policy (`make_generator`): transformers' `generate` in
    batches of `batch`, or a continuous generator (native, ctranslate2, vLLM) given all prompts at once. Used by
    the runbook planner and reviewer."""
    from .hf_generate import generate_batch

    if resolve_backend(policy, backend) == "transformers":
        replies = []
        for start in range(0, len(prompts), batch):
            replies += generate_batch(policy.model, policy.tokenizer, prompts[start:start + batch],
                                      max_new_tokens=max_new_tokens, temperature=temperature, seed=seed + start)
        return replies
    gen, out = make_generator(policy, backend, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed,
                              max_concurrent=batch, context_budget=max(map(len, prompts), default=1)), {}
    with gen:
        for i, p in enumerate(prompts):
            gen.submit(i, p)
        while gen.busy:
            out.update(dict(gen.poll()))
    return [out[i] for i in range(len(prompts))]
