"""What the RPR tests share: the bundled tokenizer (its vocabulary sizes the tiny models)."""

import pytest

from rsi_lite.policy.model import prepare_model


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer

    t = AutoTokenizer.from_pretrained(str(prepare_model()))
    t.pad_token = t.eos_token
    return t
