"""A stage's actor served by vLLM (`vllm_engine.vllm_policy`): the LoRA slot a saved adapter needs, bad adapter
files named by file and field, the engine's arguments (the weights' precision, the slot, the length), and without
the vllm package a clear error. Where vLLM's own objects would be built, a stand-in records what it is given: no
GPU runs here, and nothing is claimed of vLLM beyond the arguments it is handed.

Run: PYTHONPATH=. .venv/bin/python -m pytest -q tests/policy/test_vllm_policy.py
"""

import importlib.util
import json
from types import SimpleNamespace as NS

import pytest

from rsi_lite.policy.gen import vllm_engine
from rsi_lite.policy.model import prepare_model


def _adapter(tmp_path, **config):
    d = tmp_path / "actor"
    d.mkdir(exist_ok=True)
    (d / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", **config}))
    return d


@pytest.mark.parametrize(("r", "slot"), [(1, 8), (8, 8), (16, 16), (48, 64), (64, 64), (500, 512)])
def test_a_saved_adapter_gets_the_smallest_slot_vllm_accepts(tmp_path, r, slot):
    assert vllm_engine.adapter_rank(_adapter(tmp_path, r=r)) == r
    assert vllm_engine.lora_slot(_adapter(tmp_path, r=r)) == slot
    assert vllm_engine.lora_slot(None) == vllm_engine.LORA_SLOTS[0]  # 'base': no adapter


def test_bad_adapter_files_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"rank 600 is above the largest vLLM serves"):
        vllm_engine.lora_slot(_adapter(tmp_path, r=600))
    for bad in ("64", 0, True, None):
        with pytest.raises(ValueError, match=r"actor/adapter_config.json: field 'r' is"):
            vllm_engine.adapter_rank(_adapter(tmp_path, r=bad))
    with pytest.raises(FileNotFoundError, match=r"nowhere/adapter_config.json: missing"):
        vllm_engine.vllm_policy(str(tmp_path / "nowhere"), "smollm2-135m", max_model_len=4096)


def test_the_engine_gets_the_precision_the_slot_and_the_length(tmp_path, monkeypatch):
    made = {}
    fake = NS(EngineArgs=lambda **kw: made.update(kw) or kw, LLMEngine=NS(from_engine_args=lambda args: "engine"))
    monkeypatch.setattr(vllm_engine, "_vllm", lambda: fake)
    adapter = _adapter(tmp_path, r=48)
    pol = vllm_engine.vllm_policy(str(adapter), "smollm2-135m", max_model_len=8192, gpu_memory_utilization=0.8)
    assert made["dtype"] == "bfloat16" and made["max_lora_rank"] == 64 and made["max_model_len"] == 8192
    assert made["gpu_memory_utilization"] == 0.8 and made["model"] == str(prepare_model())
    assert pol.engine == "engine" and pol.adapter == str(adapter) and pol.tokenizer.padding_side == "left"
    base = vllm_engine.vllm_policy("base", "smollm2-135m", max_model_len=4096)
    assert base.adapter is None and base.lora_request() is None and made["max_lora_rank"] == 8


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_without_vllm_the_policy_is_refused_naming_the_package():
    with pytest.raises(RuntimeError, match=r"the vLLM backend needs the vllm package"):
        vllm_engine.vllm_policy("base", "smollm2-135m", max_model_len=4096)
