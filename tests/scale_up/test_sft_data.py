"""Self-rewrite's SFT dataset in verl (`scale_up.sft_data.KitSFTDataset`): built by verl's own
`create_sft_dataset` from the kit's dataset.jsonl (examples made by the kit's `rsi_lite.rsr.clean.build_example`
from trajectories), batched by verl's collator, its items must be the kit's examples, and verl's SFT loss on
them the kit's masked NLL.

Run (verl's environment; the bundled tokenizer is prepared by the kit's, `make venv verl-env`):
    RSI_LITE_KIT_PYTHON=.venv/bin/python .venv-verl/bin/python -m pytest -q tests/scale_up/test_sft_data.py
"""

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402

from .conftest import REPO  # noqa: E402


def _examples(tok):
    from rsi_lite.harness.messages import Message
    from rsi_lite.rsr.clean import build_example

    from ..conftest import scripted_trajectory

    dialogues = [
        [Message("instruction", "Count the rows of data.csv."), Message("action", "```bash\nwc -l data.csv\n```"),
         Message("observation", "4 data.csv"), Message("action", "The file has 4 lines. Done.")],
        [Message("instruction", "Make out.txt say hi."), Message("action", "```bash\necho hi > out.txt\n```"),
         Message("observation", ""), Message("action", "Done.")],
        [Message("instruction", "List the files."), Message("action", "```bash\nls\n```"),
         Message("observation", "a b c"), Message("action", "```bash\nls -la\n```"),
         Message("observation", "total 0"), Message("action", "Done.")],
    ]
    out = [build_example(tok, scripted_trajectory(tok, d, harness="plain"), "resolve") for d in dialogues]
    assert all(e is not None for e in out)
    return out


@pytest.fixture(scope="module")
def kit_examples(model_dir, tmp_path_factory):
    from transformers import AutoTokenizer

    from rsi_lite.records import write_jsonl_atomic

    tok = AutoTokenizer.from_pretrained(model_dir)
    examples = _examples(tok)
    path = tmp_path_factory.mktemp("rsr-1") / "dataset.jsonl"
    write_jsonl_atomic(path, [e.to_dict() for e in examples])  # as the RSR stage writes it
    return tok, examples, path


def _dataset(tok, path, pad_mode="no_padding", max_length=4096):
    from omegaconf import OmegaConf
    from verl.trainer.sft_trainer import create_sft_dataset

    cfg = OmegaConf.create({"custom_cls": {"path": str(REPO / "scale_up" / "sft_data.py"), "name": "KitSFTDataset"},
                            "pad_mode": pad_mode, "max_length": max_length, "truncation": "error"})
    return create_sft_dataset(str(path), cfg, tok, None)


def test_verls_dataset_items_are_the_kits_examples(kit_examples):
    from verl.utils.dataset.dataset_utils import DatasetPadMode, SFTTensorCollator

    tok, examples, path = kit_examples
    ds = _dataset(tok, path)
    assert type(ds).__name__ == "KitSFTDataset" and len(ds) == len(examples) and ds.dropped == 0
    for item, e in zip(ds, examples):
        assert item["input_ids"].tolist() == e.input_ids and item["loss_mask"].tolist() == e.loss_mask
        assert sum(e.loss_mask) > 0 and 0 < sum(e.loss_mask) < len(e.loss_mask)
    batch = SFTTensorCollator(DatasetPadMode.NO_PADDING)([ds[i] for i in range(len(ds))])
    assert batch["input_ids"].is_nested
    assert [t.tolist() for t in batch["input_ids"].unbind()] == [e.input_ids for e in examples]
    assert [t.tolist() for t in batch["loss_mask"].unbind()] == [e.loss_mask for e in examples]


def test_right_padding_and_the_length_limit(kit_examples):
    tok, examples, path = kit_examples
    longest = max(len(e.input_ids) for e in examples)
    ds = _dataset(tok, path, pad_mode="right", max_length=longest)
    assert len(ds) == len(examples)
    for item, e in zip(ds, examples):
        n = len(e.input_ids)
        assert item["input_ids"].shape == (longest,) and item["attention_mask"].sum() == n
        assert item["input_ids"][:n].tolist() == e.input_ids and item["loss_mask"][n:].sum() == 0
    # an example longer than max_length is left out, as the kit's train_sft leaves it out, never cut
    short = _dataset(tok, path, max_length=longest - 1)
    assert len(short) == len(examples) - 1 and short.dropped == 1


def test_verls_sft_loss_on_these_items_is_the_kits_masked_nll(kit_examples):
    """The mask convention: the kit's mask marks the tokens to predict, and verl's loss shifts it to the
    log-probabilities; on the same logits both give the same loss."""
    from verl.utils import tensordict_utils as tu
    from verl.utils.dataset.dataset_utils import DatasetPadMode, SFTTensorCollator
    from verl.workers.utils.losses import sft_loss

    from rsi_lite.rsr.sft import masked_nll

    tok, examples, path = kit_examples
    ds = _dataset(tok, path)
    batch = SFTTensorCollator(DatasetPadMode.NO_PADDING)([ds[i] for i in range(len(ds))])
    g = torch.Generator().manual_seed(0)
    vocab = len(tok)
    logits = [torch.randn(len(e.input_ids), vocab, generator=g) for e in examples]
    # verl's model output: the log-probability of each next token, at the position that predicts it
    lps = []
    for lg, e in zip(logits, examples):
        ids = torch.tensor(e.input_ids)
        lp = torch.log_softmax(lg, -1)[:-1].gather(-1, ids[1:, None]).squeeze(-1)
        lps.append(torch.cat([lp, torch.zeros(1)]))
    tokens = sum(sum(e.loss_mask[1:]) for e in examples)
    data = tu.get_tensordict({"loss_mask": batch["loss_mask"]},
                             non_tensor_dict={"pad_mode": DatasetPadMode.NO_PADDING, "dp_size": 1,
                                              "batch_num_tokens": tokens})
    verl_loss, _ = sft_loss(None, {"log_probs": torch.nested.as_nested_tensor(lps, layout=torch.jagged)}, data)
    width = max(len(e.input_ids) for e in examples)
    pad_logits = torch.zeros(len(examples), width, vocab)
    ids = torch.zeros(len(examples), width, dtype=torch.long)
    mask = torch.zeros(len(examples), width, dtype=torch.long)
    for i, (lg, e) in enumerate(zip(logits, examples)):
        n = len(e.input_ids)
        pad_logits[i, :n], ids[i, :n], mask[i, :n] = lg, torch.tensor(e.input_ids), torch.tensor(e.loss_mask)
    kit_loss = masked_nll(pad_logits, ids, mask)
    assert float(verl_loss) == pytest.approx(float(kit_loss), rel=1e-5)
