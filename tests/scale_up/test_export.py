"""verl's LoRA actor to the kit's layout and back (`scale_up.export`): a small LoRA actor set up as verl's FSDP
engine sets one up (peft, causal-LM LoRA on every linear layer), its state dict and LoRA metadata written by
verl's own checkpoint manager and model merger, exported to `rpr-1/actor/`, and loaded there by the kit's own
`load_actor` in the kit's environment: its logits must be the trained actor's.

Run (both environments, `make venv verl-env`):
    RSI_LITE_KIT_PYTHON=.venv/bin/python .venv-verl/bin/python -m pytest -q tests/scale_up/test_export.py
"""

import json
import subprocess
from types import SimpleNamespace

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402

from .conftest import kit_env, kit_python, small_tokenizer  # noqa: E402

IDS = [[1, 5, 9, 12, 40, 41, 2, 7]]


@pytest.fixture(scope="module")
def actor(tmp_path_factory):
    """(base model dir, the LoRA actor as verl's engine holds it, the logits it gives on IDS)."""
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    base = tmp_path_factory.mktemp("base")
    tok = small_tokenizer(base)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                         tie_word_embeddings=True))
    model.save_pretrained(base)
    peft_model = get_peft_model(model, LoraConfig(task_type=TaskType.CAUSAL_LM, r=8, lora_alpha=16,
                                                  target_modules="all-linear", bias="none"))
    with torch.no_grad():  # a trained actor: B is no longer zero
        for name, p in peft_model.named_parameters():
            if "lora_" in name:
                p.normal_(0, 0.2)
    peft_model.eval()
    with torch.no_grad():
        logits = peft_model(input_ids=torch.tensor(IDS)).logits
    return base, peft_model, logits


def _verl_merged(actor, tmp_path):
    """What verl leaves for a LoRA actor: its checkpoint manager's lora_train_meta.json beside the FSDP shards,
    then its model merger's lora_adapter/ from the gathered state dict (peft's keys with the adapter name)."""
    from verl.model_merger.fsdp_model_merger import FSDPModelMerger
    from verl.utils.checkpoint.fsdp_checkpoint_manager import FSDPCheckpointManager

    _, peft_model, _ = actor
    ckpt = tmp_path / "global_step_3" / "actor"
    ckpt.mkdir(parents=True)
    manager = object.__new__(FSDPCheckpointManager)
    manager.rank = 0
    assert manager._save_lora_train_meta(str(ckpt), peft_model)
    state = {k: v.clone() for k, v in peft_model.state_dict().items()}
    assert any(".default." in k for k in state)  # the live names, which the merger rewrites
    merger = object.__new__(FSDPModelMerger)
    merger.config = SimpleNamespace(local_dir=str(ckpt), target_dir=str(tmp_path / "merged"))
    return merger.save_lora_adapter(state)


def test_the_exported_actor_loads_in_the_kit_and_gives_the_same_logits(actor, tmp_path):
    from scale_up.export import export_actor

    base, _, logits = actor
    merged = _verl_merged(actor, tmp_path)
    dest = export_actor(tmp_path / "merged", tmp_path / "run" / "rpr-1" / "actor")
    assert (dest / "adapter_config.json").is_file() and json.loads((dest / "export.json").read_text())["r"] == 8
    assert str(merged).endswith("lora_adapter")
    script = ("import json, sys, torch\n"
              "from rsi_lite.policy.actor import load_actor\n"
              f"p = load_actor({str(dest)!r}, 'lora', model={str(base)!r})\n"
              "p.model.eval()\n"
              f"with torch.no_grad(): out = p.model(input_ids=torch.tensor({IDS})).logits\n"
              "print(json.dumps({'adapters': list(p.model.peft_config), 'logits': out.tolist()}))\n")
    run = subprocess.run([kit_python(), "-c", script], env=kit_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["adapters"] == ["actor"]
    assert torch.allclose(torch.tensor(got["logits"]), logits, atol=1e-5)
    # and the adapter matters: the base alone gives other logits
    with torch.no_grad(), actor[1].disable_adapter():
        plain = actor[1](input_ids=torch.tensor(IDS)).logits
    assert not torch.allclose(plain, logits, atol=1e-3)


def test_export_refuses_what_the_kit_cannot_load(actor, tmp_path):
    from safetensors.torch import save_file

    from scale_up.export import export_actor

    with pytest.raises(FileNotFoundError, match="no LoRA adapter"):
        export_actor(tmp_path / "nothing", tmp_path / "dest")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8}))
    save_file({"base_model.model.lm_head.lora_A.default.weight": torch.zeros(8, 32)},
              str(bad / "adapter_model.safetensors"))
    with pytest.raises(ValueError, match="peft's LoRA names"):
        export_actor(bad, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
