"""Self-rewrite's SFT on TRL's SFTTrainer: it trains exactly the action tokens, and one step of it equals one
step of the kit's own loop. Run: pytest tests/rsr/test_sft.py
"""

from types import SimpleNamespace

import pytest
import torch

from rsi_lite.policy.model import PolicyConfig, load_policy
from rsi_lite.rsr.sft import SFTConfig, masked_nll, train_sft

pytest.importorskip("trl")


def examples():
    # prompt tokens (mask 0), then action tokens (1), an observation (0), another action (1)
    out = []
    for i, n in enumerate((9, 12, 7, 10)):
        ids = [(17 * i + 5 * t) % 400 + 10 for t in range(n)]
        mask = [0, 0, 0] + [1] * 2 + [0] * 2 + [1] * (n - 7)
        out.append(SimpleNamespace(input_ids=ids, loss_mask=mask))
    return out


def actor_weights(policy):
    return {n: p.detach().clone() for n, p in policy.model.named_parameters() if ".actor." in n}


def test_trl_trains_exactly_the_action_tokens(small_random_model):
    policy = load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))
    seen = []

    def record(module, args, kwargs):
        seen.append((kwargs["input_ids"].clone(), kwargs["labels"].clone()))

    hook = policy.model.register_forward_pre_hook(record, with_kwargs=True)
    try:
        summary = train_sft(policy, examples(), SFTConfig(epochs=2, batch_size=2, loop="trl"))
    finally:
        hook.remove()
    assert summary["loop"] == "trl" and summary["steps"] == 4 and len(seen) == 4
    rows = 0
    for ids, labels in seen:
        for row_ids, row_labels in zip(ids.tolist(), labels.tolist()):
            ex = next(e for e in examples() if row_ids[:len(e.input_ids)] == e.input_ids)  # the row, unpadded
            trained = [t for t, lab in enumerate(row_labels) if lab != -100]
            assert trained == [t for t, m in enumerate(ex.loss_mask) if m]  # the action tokens: no prompt, no padding
            assert all(row_labels[t] == row_ids[t] for t in trained)
            rows += 1
    assert rows == 8  # every example in every epoch


def test_one_trl_step_equals_one_step_of_the_kits_loop(small_random_model):
    exs = examples()
    after, losses = {}, {}
    for loop in ("trl", "kit"):
        policy = load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))
        before = actor_weights(policy)
        ids = torch.tensor([exs[0].input_ids])
        with torch.no_grad():
            want = float(masked_nll(policy.model(input_ids=ids).logits, ids, torch.tensor([exs[0].loss_mask])))
        summary = train_sft(policy, exs[:1], SFTConfig(epochs=1, batch_size=1, loop=loop, lr=1e-3))
        assert summary["steps"] == 1 and summary["first_loss"] == pytest.approx(want, abs=1e-4)
        after[loop], losses[loop] = actor_weights(policy), summary["first_loss"]
        assert any(not torch.equal(before[n], after[loop][n]) for n in before)  # the step moved the adapter
    assert losses["trl"] == pytest.approx(losses["kit"], abs=1e-5)
    for name, w in after["kit"].items():
        torch.testing.assert_close(after["trl"][name], w, atol=1e-6, rtol=1e-4)


def test_an_unknown_loop_is_an_error(small_random_model):
    policy = load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))
    with pytest.raises(ValueError, match="SFTConfig.loop"):
        train_sft(policy, examples(), SFTConfig(loop="keras"))


@pytest.mark.parametrize("loop", ["trl", "kit"])
def test_the_sft_curves_go_to_tensorboard_when_asked(small_random_model, tmp_path, loop):
    from ..rpr.test_stage import tensorboard_scalars

    policy = load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))
    summary = train_sft(policy, examples(), SFTConfig(epochs=2, batch_size=2, loop=loop, report_to="tensorboard"),
                        metrics_path=tmp_path / "metrics.jsonl")
    curves = tensorboard_scalars(tmp_path / "tensorboard")
    assert [s for s, _ in curves["losses/sft"]] == [1, 2, 3, 4] == list(range(1, summary["steps"] + 1))
    assert curves["losses/sft"][0][1] == pytest.approx(summary["first_loss"], abs=1e-5)
    assert {"grad_norm", "lr"} <= set(curves)


def test_report_to_names_what_it_accepts():
    from rsi_lite.tracking import Curves

    with pytest.raises(ValueError, match="report_to"):
        Curves("wandb", None)
