"""Fixtures of scale_up's tests, which run in verl's environment (`make verl-env`; `make test-verl` runs them)."""

import json

import pytest

# The target architecture of scale_up/configs/rsi_27b.yaml: a dense Qwen-family 27B
TARGET = {"hidden_size": 5120, "intermediate_size": 22016, "num_hidden_layers": 64, "num_attention_heads": 40,
          "num_key_value_heads": 8, "vocab_size": 152064, "max_position_embeddings": 262144,
          "tie_word_embeddings": False}

CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def small_tokenizer(path):
    """A word-level tokenizer with ChatML's special tokens and template, saved to `path` (no model hub)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<|im_start|>", "<|im_end|>", "<unk>", "system", "user", "assistant", "\n"]
    words += [f"w{i}" for i in range(200)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<|im_end|>",
                                   unk_token="<unk>", additional_special_tokens=["<|im_start|>"])
    fast.chat_template = CHATML
    fast.save_pretrained(path)
    return fast


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
