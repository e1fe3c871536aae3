"""How the cycle's kit-side jobs load the policy on one GPU, so that a 27B model fits an 80 GB one.

The kit's own loader (`policy.actor.load_actor`) holds the base in float32: a 27B model's weights alone are over
100 GB (`python -m scale_up.memory` prints the figure). What each job does with the policy, read from the code:

    eval     `loop.phases.run_eval` -> `eval.evaluate` -> `rollout.run_episodes`: episodes, nothing trained.
    rewrite  `rsr.stage.run_rsr(until="dataset")`: discovery and re-solve episodes (`run_episodes`), the runbook
             planner and the reviewer (`policy.gen.dispatch.complete`, on the same backend as the episodes), the
             dataset's tokenizer. Nothing trained:
             the SFT is verl's `sft` job (FSDP over the nodes, `configs/rsi_sft.yaml`), and `run_rsr` refuses to
             fine-tune a vLLM-served policy.
    serve    `kit_server`: the kit's own transformers engine, the reference verl's agent loop is checked against
             (the CPU tests; on GPUs verl's vLLM servers serve the agent loop).
    finish   no model: `run_rsr` finds the exported checkpoint (`kit_jobs.finish` refuses to start without it).

So `eval` and `rewrite` need generation only. `choose_loading` picks, per job:

    CUDA and vllm imports   vLLM serves it (`vllm_policy`): bf16 weights, the adapter as a LoRA request
    CUDA, no vllm           the kit's model (`load_actor`) in bf16, served by transformers' continuous batching
                            engine, with the episodes decoded at once capped to what the GPU holds
                            (`memory.hf_max_batch`). Not the kit's native engine, which `auto` picks for Qwen2 and
                            Llama: it keeps stacked copies of each layer's q/k/v and gate/up weights (about 60% of
                            a 27B model's weights again) and reserves every slot's whole cache up front.
    no CUDA                 as before: `load_actor` in float32, the job's own generation backend (the CPU tests)

`serve` always takes the kit's model and its transformers engine (that is what it is for), bf16 on CUDA.
`plan_job` applies the choice to a job's rollout settings on this machine and checks the memory
(`memory.kit_job`); an impossible fit is an error that names the model and the figures.
Not run on a GPU yet: the memory is estimated from the model's shape, not measured.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from . import memory

JOBS = {"eval": "generation", "rewrite": "generation", "serve": "the kit's transformers engine"}
"""The jobs that load a policy, and what they need from it (the module docstring says why)."""


@dataclass(frozen=True)
class Loading:
    """How one job loads the policy."""

    job: str
    route: str
    """'vllm' (`vllm_engine.vllm_policy`: generation only), 'remote' (verl's standalone replicas over the
    cluster, `scale_up.serve`, reached by `remote_engine.remote_policy`: generation only) or 'hf' (`load_actor`:
    the kit's trainable model)."""
    dtype: str
    """The base weights' precision (`PolicyConfig.dtype`, vLLM's `dtype`)."""
    generation_backend: str | None
    """The `RolloutConfig.generation_backend` the job's episodes use; None: the job's configured one."""


def choose_loading(job: str, *, cuda: bool, vllm: bool) -> Loading:
    """The route, the precision and the generation backend of `job` (see the module docstring) on a machine with
    or without CUDA, where the vllm package imports or not."""
    if job not in JOBS:
        raise ValueError(f"choose_loading: job {job!r} is not one of {', '.join(JOBS)}")
    dtype = "bfloat16" if cuda else "float32"
    if job == "serve":
        return Loading(job, "hf", dtype, "transformers")
    if cuda and vllm:
        return Loading(job, "vllm", dtype, "vllm")
    return Loading(job, "hf", dtype, "transformers" if cuda else None)


def this_machine() -> dict:
    """What `choose_loading` and `plan_job` need to know of this machine: CUDA, vllm importable, GPU 0's memory."""
    import torch

    cuda = torch.cuda.is_available()
    return {"cuda": cuda, "vllm": importlib.util.find_spec("vllm") is not None,
            "gpu_gb": torch.cuda.get_device_properties(0).total_memory / memory.GB if cuda else None}


def model_arch(model: str) -> memory.Arch:
    """The shape of `model` (a local model directory, or the bundled alias) from its config.json."""
    from rsi_lite.policy.model import resolve_model

    path = Path(resolve_model(model)) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (a kit job on a GPU needs a local model directory)")
    try:
        return memory.Arch.from_config(json.loads(path.read_text()))
    except KeyError as e:
        raise ValueError(f"{path}: field {e.args[0]!r} missing (the memory check reads the model's shape)") from None


def adapter_rank(init: str, route: str) -> int:
    """The LoRA rank the job's GPU holds for the actor it starts from: on the 'hf' route the adapter's own (a saved
    adapter's `r`, a fresh adapter's for 'base'), on the 'vllm' route the slot vLLM reserves for it (`lora_slot`)."""
    from rsi_lite.policy.gen.vllm_engine import adapter_rank as saved_rank
    from rsi_lite.policy.gen.vllm_engine import lora_slot
    from rsi_lite.policy.model import PolicyConfig

    adapter = None if init == "base" else init
    if route == "vllm":
        return lora_slot(adapter)
    return saved_rank(adapter) if adapter else PolicyConfig().lora_r


@dataclass
class JobLoading:
    """A job's loading on this machine: the choice, the rollout settings it serves, its estimated memory."""

    loading: Loading
    rollout: object
    """The job's `RolloutConfig` as this loading runs it (generation backend, episodes at once)."""
    memory: dict | None
    """`memory.kit_job` on this GPU; None on the CPU."""
    max_model_len: int = 0
    """vLLM's `max_model_len` (the vLLM route only)."""
    servers: dict | None = None
    """The remote route's servers.json (`scale_up.serve.write_servers`)."""

    def load(self, init: str, model: str):
        """The policy (`init`: 'base' or a saved adapter), as `run_eval` and `run_rsr` take a `load`."""
        if self.loading.route == "remote":
            from rsi_lite.policy.gen.remote_engine import remote_policy

            if self.servers.get("init") != init:
                raise ValueError(f"servers.json serves {self.servers.get('init')!r}, the job starts from {init!r}")
            return remote_policy(self.servers["servers"], self.servers["served_model"],
                                 served_model=self.servers["served_model"])
        if self.loading.route == "vllm":
            from rsi_lite.policy.gen.vllm_engine import vllm_policy

            return vllm_policy(init, model, max_model_len=self.max_model_len, dtype=self.loading.dtype,
                               gpu_memory_utilization=memory.KIT_UTILIZATION)
        from rsi_lite.policy.actor import load_actor

        return load_actor(init, model=model, dtype=self.loading.dtype)

    def record(self) -> dict:
        """What loading.json keeps beside the job's files."""
        return {**asdict(self.loading), "batch_size": self.rollout.batch_size, "max_model_len": self.max_model_len,
                "memory": self.memory, **({"servers": self.servers} if self.servers else {})}


def plan_job(job: str, init: str, model: str, rollout, here: dict | None = None,
             servers: dict | None = None) -> JobLoading:
    """`choose_loading` for `job` on `here` (`this_machine()` unless given: {"cuda", "vllm", "gpu_gb"}), applied to
    the job's `rollout` (a `RolloutConfig`, not changed): on a GPU, the backend the route serves with, the episodes
    at once capped to what the GPU holds (the transformers route), and the memory estimate of the model's shape.
    A model that does not fit is an error naming it and the figures. With `servers` (a servers.json of
    `scale_up.serve`, the actor on the cluster's replicas) the remote route: nothing loaded here but the tokenizer,
    the episodes at once as the job asks (the replicas batch them)."""
    if servers is not None:
        if job not in ("eval", "rewrite"):
            raise ValueError(f"plan_job: job {job!r} cannot run on remote servers (eval and rewrite generate only)")
        return JobLoading(Loading(job, "remote", "bfloat16", "remote"),
                          replace(rollout, generation_backend="remote"), None, servers=servers)
    here = this_machine() if here is None else here
    how = choose_loading(job, cuda=here["cuda"], vllm=here["vllm"])
    if not here["cuda"]:
        return JobLoading(how, rollout, None)
    arch, rank, gb = model_arch(model), adapter_rank(init, how.route), here["gpu_gb"]
    backend = {"generation_backend": how.generation_backend}
    dtype = "bf16" if how.dtype == "bfloat16" else how.dtype
    common = dict(adapter_rank=rank, context_budget=rollout.context_budget, gpu_gb=gb, page_size=rollout.page_size)
    if how.route == "vllm":
        length = memory.vllm_model_len(rollout.context_budget)
        mem = memory.kit_job(arch, "vllm", dtype, batch=rollout.batch_size, max_model_len=length, **common)
        if not mem["fits"]:
            raise ValueError(f"{model}: served by vLLM on this {gb:.0f} GB GPU, {mem['weights_gb']:.1f} GB of "
                             f"weights leave a KV cache of {mem['kv_cache_tokens']:,} tokens, under the "
                             f"{length:,} one sequence needs ({job} job); serve it over the cluster's GPUs "
                             '("serve": true in cycle.json), or use a larger GPU')
        return JobLoading(how, replace(rollout, **backend), mem, length)
    most = memory.hf_max_batch(arch, dtype, **common)
    if most < 1:
        one = memory.kit_job(arch, "hf", dtype, batch=1, **common)
        raise ValueError(f"{model}: in {how.dtype} on this {gb:.0f} GB GPU, {one['weights_gb']:.1f} GB of weights and "
                         f"{one['adapter_gb']:.1f} GB of adapter leave no room for one episode's cache within "
                         f"{one['budget_gb']:.1f} GB ({job} job); serve it over the cluster's GPUs (\"serve\": "
                         "true in cycle.json), install vllm in the kit's environment, or use a larger GPU")
    served = replace(rollout, **backend, batch_size=min(rollout.batch_size, most))
    return JobLoading(how, served, memory.kit_job(arch, "hf", dtype, batch=served.batch_size, **common))
