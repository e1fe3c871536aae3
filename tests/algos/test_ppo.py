"""PPO losses: the asymmetric clip by hand, masking, gradients past the clip, explained variance.
Run: pytest tests/algos/test_ppo.py
"""

import math

import pytest
import torch

from rsi_lite.algos.ppo import PPOConfig, explained_variance, masked_whiten, policy_loss, ppo_loss, value_loss

T = torch.tensor


def test_docstring_example_asymmetric_clip():
    old = torch.zeros(1, 2)
    new = torch.log(T([[7.0, 0.5]]))
    loss, stats = policy_loss(new, old, T([[1.0, -1.0]]), torch.ones(1, 2), 0.7, 6.0)
    assert loss.item() == pytest.approx(-2.65)
    assert stats["losses/clipfrac"] == 1.0 and stats["ratio/max"] == pytest.approx(7.0)


def test_no_gradient_past_the_clip_and_full_gradient_inside():
    adv, mask = T([[1.0, 1.0, -1.0, -1.0]]), torch.ones(1, 4)
    new = torch.log(T([[7.0, 2.0, 0.5, 0.9]])).requires_grad_()
    loss, _ = policy_loss(new, torch.zeros(1, 4), adv, mask)
    loss.backward()
    g = new.grad[0]
    assert g[0] == 0 and g[2] == 0  # above 6 with A > 0, below 0.7 with A < 0: clipped
    assert g[1] == pytest.approx(-2.0 / 4) and g[3] == pytest.approx(0.9 / 4)  # -A * ratio / n


def test_masked_tokens_change_nothing():
    new, old, adv = torch.randn(2, 5), torch.randn(2, 5), torch.randn(2, 5)
    mask = T([[1, 1, 0, 0, 1], [0, 1, 1, 0, 0]])
    a, _ = policy_loss(new, old, adv, mask)
    new2 = torch.where(mask.bool(), new, torch.randn(2, 5) * 100)
    b, _ = policy_loss(new2, old, adv, mask)
    assert a.item() == pytest.approx(b.item())


def test_ratio_one_gives_minus_mean_advantage_and_zero_kl():
    lp = torch.randn(1, 3)
    loss, stats = policy_loss(lp, lp, T([[1.0, 2.0, 3.0]]), torch.ones(1, 3))
    assert loss.item() == pytest.approx(-2.0) and stats["losses/approx_kl"] == pytest.approx(0.0)


def test_value_loss_and_explained_variance():
    mask = T([[1, 1, 1, 0]])
    ret = T([[1.0, 2.0, 3.0, 99.0]])
    assert value_loss(ret, ret, mask).item() == 0.0
    assert explained_variance(ret, ret, mask) == pytest.approx(1.0)
    assert explained_variance(torch.full((1, 4), 2.0), ret, mask) == pytest.approx(0.0)
    assert explained_variance(-ret, ret, mask) < 0
    assert math.isnan(explained_variance(ret, torch.ones(1, 4), mask))


def test_whiten_and_default_coefficients():
    x, mask = T([[1.0, 2.0, 3.0, 50.0]]), T([[1, 1, 1, 0]])
    w = masked_whiten(x, mask)
    assert w[0, 3] == 0 and w[0, :3].mean().abs() < 1e-6
    cfg = PPOConfig()
    assert (cfg.ratio_low, cfg.ratio_high, cfg.kl_coef, cfg.ent_coef) == (0.7, 6.0, 0.0, 0.0)
    loss, stats = ppo_loss(torch.zeros(1, 4), torch.zeros(1, 4), x, torch.zeros(1, 4), x, mask)
    assert set(stats) >= {"losses/policy", "losses/value", "losses/clipfrac", "losses/approx_kl",
                          "losses/explained_variance", "ratio/mean", "ratio/min", "ratio/max"}
