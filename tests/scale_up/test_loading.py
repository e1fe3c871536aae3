"""How the cycle's kit jobs load the policy (`scale_up.loading`) and what that costs a GPU (`scale_up.memory`):
the choice per job for each kind of machine, the 27B target's memory on 80 GB and 141 GB GPUs under each route,
the batch the transformers route holds, bad input named, and on this CPU machine the real choice and loader
(float32, the job's own settings; the vLLM route asked for without vllm fails with the package's name). No GPU
has run any of it: the GPU figures are the plan's arithmetic on the model's shape.

Run (verl's environment, or the kit's):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_loading.py
"""

import importlib.util
import json
from dataclasses import replace

import pytest

from rsi_lite.rollout.engine import RolloutConfig
from scale_up.loading import JobLoading, Loading, choose_loading, plan_job, this_machine
from scale_up.memory import GB, TARGET, Arch, hf_max_batch, kit_job, kv_bytes_per_token

GPU = RolloutConfig(max_turns=6, max_new_tokens=256, batch_size=64)
"""Rollouts at the `gpu` profile's batch (64) with a 2,048-token context: the one-GPU routes' case (`"serve":
false` with a shorter rsi.context_budget; at the paper's 262,144 tokens neither route holds one sequence)."""


@pytest.mark.parametrize("job", ["eval", "rewrite"])
def test_generation_jobs_take_vllm_on_a_gpu_where_it_imports_else_bf16_and_fp32_on_the_cpu(job):
    assert choose_loading(job, cuda=True, vllm=True) == Loading(job, "vllm", "bfloat16", "vllm")
    # the kit's model in bf16 and transformers' engine, not the native one (stacked weight copies, whole slots)
    assert choose_loading(job, cuda=True, vllm=False) == Loading(job, "hf", "bfloat16", "transformers")
    for vllm in (False, True):  # the CPU: as before, the job's own backend
        assert choose_loading(job, cuda=False, vllm=vllm) == Loading(job, "hf", "float32", None)


def test_the_server_always_runs_the_kits_own_engine_and_an_unknown_job_is_named():
    assert choose_loading("serve", cuda=True, vllm=True) == Loading("serve", "hf", "bfloat16", "transformers")
    assert choose_loading("serve", cuda=False, vllm=False) == Loading("serve", "hf", "float32", "transformers")
    with pytest.raises(ValueError, match=r"job 'sft' is not one of eval, rewrite, serve"):
        choose_loading("sft", cuda=True, vllm=True)


def test_the_cache_per_token_is_what_transformers_holds():
    """`kv_bytes_per_token` against the cache a real (small, random) Qwen2 model of the target's head layout
    fills for 5 tokens."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, vocab_size=100))
    with torch.no_grad():
        out = model(torch.arange(5)[None], use_cache=True)
    cache = getattr(out, "cache", None) or out.past_key_values
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert held / 5 == kv_bytes_per_token(Arch(2, 64, 128, 4, 2, 100, False), "fp32")


def test_the_27b_target_on_80_and_141_gb(target_model_dir):
    """The float32 load (the kit's default) does not fit 80 GB; vLLM in bf16 does, with room in its cache for
    the longest sequence a job sends; the kit's model in bf16 does at fewer episodes at once (on 141 GB at the
    profile's 64)."""
    arch, model = Arch.from_config(TARGET), str(target_model_dir)
    fp32 = kit_job(arch, "hf", "fp32", adapter_rank=64, context_budget=2048, batch=1, gpu_gb=80)
    assert fp32["weights_gb"] == pytest.approx(arch.params() * 4 / GB) and fp32["weights_gb"] > 100
    assert not fp32["fits"]

    served = plan_job("eval", "base", model, GPU, here={"cuda": True, "vllm": True, "gpu_gb": 80})
    assert served.loading.route == "vllm" and served.rollout.generation_backend == "vllm"
    assert served.rollout.batch_size == 64 and served.max_model_len == 8192  # vLLM schedules within its cache
    m = served.memory
    assert m["fits"] and m["weights_gb"] == pytest.approx(arch.params() * 2 / GB) and m["weights_gb"] < 56
    assert m["kv_cache_tokens"] >= 8192 and m["total_gb"] == pytest.approx(0.85 * 80)
    assert m["adapter_gb"] == pytest.approx(2 * arch.lora_params(8) / GB)  # 'base': the smallest LoRA slot

    held = plan_job("eval", "base", model, GPU, here={"cuda": True, "vllm": False, "gpu_gb": 80})
    most = hf_max_batch(arch, "bf16", adapter_rank=16, context_budget=2048, gpu_gb=80)
    assert held.loading == Loading("eval", "hf", "bfloat16", "transformers") and 0 < most < 64
    assert held.rollout.batch_size == most and held.rollout.generation_backend == "transformers"
    assert held.memory["fits"] and held.memory["total_gb"] <= 0.85 * 80
    over = kit_job(arch, "hf", "bf16", adapter_rank=16, context_budget=2048, batch=most + 1, gpu_gb=80)
    assert not over["fits"]
    assert not kit_job(arch, "hf", "bf16", adapter_rank=16, context_budget=2048, batch=64, gpu_gb=80)["fits"]
    assert GPU.batch_size == 64 and GPU.generation_backend == "auto"  # the job's settings are not changed

    big = plan_job("rewrite", "base", model, GPU, here={"cuda": True, "vllm": False, "gpu_gb": 141})
    assert big.rollout.batch_size == 64 and big.memory["fits"]
    assert plan_job("rewrite", "base", model, GPU, here={"cuda": True, "vllm": True, "gpu_gb": 141}).memory["fits"]


def test_a_saved_adapter_sets_the_rank_held_and_bad_input_is_named(target_model_dir, tmp_path):
    arch, model = Arch.from_config(TARGET), str(target_model_dir)
    adapter = tmp_path / "actor"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 48, "lora_alpha": 32}))
    here = {"cuda": True, "vllm": True, "gpu_gb": 80}
    assert plan_job("eval", str(adapter), model, GPU, here=here).memory["adapter_gb"] == pytest.approx(
        2 * arch.lora_params(64) / GB)  # vLLM's slot: 64 for rank 48
    held = plan_job("eval", str(adapter), model, GPU, here={**here, "vllm": False})
    assert held.memory["adapter_gb"] == pytest.approx(4 * arch.lora_params(48) / GB)  # fp32 adapter, its own rank
    (adapter / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA"}))
    with pytest.raises(ValueError, match=r"actor/adapter_config.json: field 'r' is None"):
        plan_job("eval", str(adapter), model, GPU, here=here)
    with pytest.raises(FileNotFoundError, match=r"nowhere/adapter_config.json: missing"):
        plan_job("eval", str(tmp_path / "nowhere"), model, GPU, here=here)
    # a GPU too small for the model: each route says so with the figures
    with pytest.raises(ValueError, match=r"in bfloat16 on this 60 GB GPU, 54.5 GB of weights .* no room"):
        plan_job("eval", "base", model, GPU, here={"cuda": True, "vllm": False, "gpu_gb": 60})
    with pytest.raises(ValueError, match=r"served by vLLM on this 64 GB GPU, 54.5 GB of weights leave a KV cache"):
        plan_job("eval", "base", model, GPU, here={"cuda": True, "vllm": True, "gpu_gb": 64})
    # a model directory without its shape
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"hidden_size": 8}))
    with pytest.raises(ValueError, match=r"bad/config.json: field 'num_hidden_layers' missing"):
        plan_job("eval", "base", str(bad), GPU, here=here)


def test_on_this_cpu_machine_the_jobs_load_as_before(model_dir):
    """The real choice here: no CUDA, so the kit's loader in float32 and the job's rollout as configured; the
    vLLM route asked for anyway fails naming the package it needs."""
    here = this_machine()
    if here["cuda"]:
        pytest.skip("a CUDA machine: this test is the CPU machine's")
    assert here["vllm"] == (importlib.util.find_spec("vllm") is not None) and here["gpu_gb"] is None
    how = plan_job("eval", "base", model_dir, GPU)
    assert how.loading == Loading("eval", "hf", "float32", None) and how.rollout is GPU and how.memory is None
    assert how.record()["batch_size"] == 64
    if here["vllm"]:
        return
    forced = JobLoading(Loading("eval", "vllm", "bfloat16", "vllm"), replace(GPU, generation_backend="vllm"), None,
                        8192)
    with pytest.raises(RuntimeError, match=r"the vLLM backend needs the vllm package"):
        forced.load("base", model_dir)
