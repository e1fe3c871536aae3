"""The memory plan (`scale_up.memory`) of the composed 27B config: it counts the target architecture's
parameters and LoRA parameters as transformers and peft build them (on the meta device), and it reads the
settings the config launches (tokens a micro-batch, fused kernels, LoRA or full weights).

Run (verl's environment):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_memory.py
"""

import json
from pathlib import Path

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[2] / "scale_up" / "configs"


def _cfg(target_model_dir, *overrides):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose(config_name="rsi_27b",
                       overrides=[f"actor_rollout_ref.model.path={target_model_dir}", *overrides])


def _arch(target_model_dir):
    from scale_up.memory import Arch

    return Arch.from_config(json.loads((Path(target_model_dir) / "config.json").read_text()))


def test_the_counts_are_those_of_the_model_transformers_and_peft_build(target_model_dir):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    arch = _arch(target_model_dir)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(target_model_dir))
    assert arch.params() == sum(p.numel() for p in model.parameters())
    assert 27.0e9 < arch.params() < 27.5e9
    peft_model = get_peft_model(model, LoraConfig(r=64, lora_alpha=32, target_modules="all-linear"))
    assert arch.lora_params(64) == sum(p.numel() for p in peft_model.parameters() if p.requires_grad)


def test_the_plan_reads_what_the_config_launches(target_model_dir):
    from scale_up.memory import plan

    arch = _arch(target_model_dir)
    as_committed = plan(_cfg(target_model_dir), arch, 80)
    assert as_committed["fits"] and as_committed["gpus"] == 32 and as_committed["context"] == 262144
    assert as_committed["tokens_per_micro_batch"] >= as_committed["context"]  # one whole trajectory
    unfused = plan(_cfg(target_model_dir, "actor_rollout_ref.model.use_fused_kernels=false"), arch, 80)
    s = as_committed["tokens_per_micro_batch"] // 8
    assert unfused["actor_train_gb"] - as_committed["actor_train_gb"] == pytest.approx(s * arch.vocab * 6 / 1e9)
    assert not unfused["fits"] and plan(_cfg(target_model_dir, "actor_rollout_ref.model.use_fused_kernels=false"),
                                        arch, 141)["fits"]
    half = plan(_cfg(target_model_dir, "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384"), arch, 80)
    assert half["actor_train_gb"] < as_committed["actor_train_gb"]
    lora_critic = plan(_cfg(target_model_dir, "critic.model.lora_rank=64"), arch, 80)
    assert lora_critic["critic_states_gb"] < as_committed["critic_states_gb"] / 4


def test_the_config_read_without_verl_is_the_composed_one(target_model_dir):
    """Notebook 07 runs in the kit's environment (no verl, no Hydra) and reads the config file as plain YAML
    (`scale_up.settings.read_config`): its plan and its settings table must be those of the composed config."""
    from scale_up.memory import plan
    from scale_up.settings import ROWS, at, read_config, side_by_side

    arch, composed, raw = _arch(target_model_dir), _cfg(target_model_dir), read_config()
    for gb in (80, 141):
        assert plan(raw, arch, gb) == plan(composed, arch, gb)
    for _, verl_path, _, _ in ROWS:
        assert at(raw, verl_path) == at(composed, verl_path), verl_path
    rows = side_by_side(composed)
    assert ("ratio clip low", 0.7) in rows and ("ratio clip high", 6.0) in rows and ("critic-only steps", 4) in rows


def test_the_sft_job_is_planned_with_its_logits(target_model_dir):
    """The self-rewrite's SFT job (configs/rsi_sft.yaml): the LoRA actor alone, and its logits counted, since verl's
    SFT trainer never asks the engine for fused kernels; a micro-batch of a whole 262,144-token episode over the
    Ulysses group of 8 is 32,768 tokens a GPU."""
    import yaml

    from scale_up.memory import GB, Arch, activation_terms, sft_plan

    arch = Arch.from_config(json.loads((Path(target_model_dir) / "config.json").read_text()))
    sft = yaml.safe_load((CONFIGS / "rsi_sft.yaml").read_text())
    p = sft_plan(sft, arch, 80)
    assert p["gpus"] == 32 and p["tokens_per_gpu"] * sft["engine"]["ulysses_sequence_parallel_size"] == 262144
    assert p["activation_terms"] == activation_terms(32768, arch, logits=True)
    assert p["activation_terms"]["logits"] == pytest.approx(32768 * arch.vocab * 6 / GB)
    assert p["states_gb"] == pytest.approx((arch.params() * 2 + 16 * arch.lora_params(64)) / 32 / GB)
    assert p["fits"] and not sft_plan(sft, arch, 60)["fits"]
