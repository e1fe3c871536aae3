"""Fixtures of scale_up's tests, which run in verl's environment (`make verl-env`; `make test-verl` runs them)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from scale_up.memory import TARGET as MEMORY_TARGET

REPO = Path(__file__).resolve().parents[2]

# The target architecture of scale_up/configs/rsi_27b.yaml: a dense Qwen-family 27B (its config.json's fields)
TARGET = {k: v for k, v in MEMORY_TARGET.items() if k != "model_type"}


def small_tokenizer(path):
    """A word-level tokenizer with ChatML's tokens and template (`scale_up.gpu_step.small_tokenizer`)."""
    from scale_up.gpu_step import small_tokenizer as make

    return make(path)


@pytest.fixture(scope="session")
def target_model_dir(tmp_path_factory):
    """A model directory of the target architecture: its config.json (no weights) and a small tokenizer, what
    verl's config checks read (`HFModelConfig` loads the config and the tokenizer)."""
    from transformers import Qwen2Config

    path = tmp_path_factory.mktemp("target")
    Qwen2Config(**TARGET, architectures=["Qwen2ForCausalLM"]).save_pretrained(path)
    small_tokenizer(path)
    (path / "generation_config.json").write_text(json.dumps({"eos_token_id": 2}))
    return path


def kit_python() -> str:
    """The kit's environment's python (the CPU generation server and the reference episodes run there):
    $RSI_LITE_KIT_PYTHON (`make test-verl` sets it), else .venv/bin/python; the test skips without one."""
    py = os.environ.get("RSI_LITE_KIT_PYTHON") or str(REPO / ".venv" / "bin" / "python")
    if not Path(py).exists():
        pytest.skip(f"the kit's environment ({py}) is not there: make venv")
    return py


def kit_env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="session")
def model_dir():
    """The bundled model as a local model directory, prepared by the kit's environment (its GGUF reader is there)."""
    out = subprocess.run([kit_python(), "-c", "from rsi_lite.policy.model import prepare_model; print(prepare_model())"],
                         env=kit_env(), capture_output=True, text=True, timeout=600, check=True)
    return out.stdout.strip().splitlines()[-1]
