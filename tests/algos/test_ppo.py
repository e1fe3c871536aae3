"""PPO losses: the asymmetric clip by hand, masking, gradients past the clip, explained variance, and the
rollout correction's truncated importance weights against a plain-torch reference.
Run: pytest tests/algos/test_ppo.py
"""

import math

import pytest
import torch

from rsi_lite.algos.ppo import (
    PPOConfig,
    explained_variance,
    masked_whiten,
    policy_loss,
    ppo_loss,
    truncated_is_weights,
    value_loss,
)

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


# ---------------------------------------------------------------- rollout correction (truncated IS)

def _reference_weights(old, rollout, mask, cap):
    """Token by token, as the docstring states it: min(pi_old / pi_rollout, C) on the mask, 0 elsewhere."""
    w = torch.zeros_like(old)
    for i in range(old.shape[0]):
        for t in range(old.shape[1]):
            if mask[i, t]:
                w[i, t] = min(math.exp(float(old[i, t]) - float(rollout[i, t])), cap)
    return w


def _reference_policy_loss(new, old, adv, mask, w, lo=0.7, hi=6.0):
    terms, n = 0.0, 0
    for i in range(new.shape[0]):
        for t in range(new.shape[1]):
            if mask[i, t]:
                r = math.exp(float(new[i, t]) - float(old[i, t]))
                a = float(adv[i, t])
                terms += float(w[i, t]) * min(r * a, min(max(r, lo), hi) * a)
                n += 1
    return -terms / max(n, 1)


def test_docstring_example_truncated_is_weights():
    old = torch.log(T([[0.8, 3.0, 5.0]]))
    w, stats = truncated_is_weights(old, torch.zeros(1, 3), T([[1, 1, 0]]), cap=2.0)
    assert torch.allclose(w, T([[0.8, 2.0, 0.0]]))
    assert stats["tis/weight_mean"] == pytest.approx(1.4) and stats["tis/truncated_frac"] == pytest.approx(0.5)


def test_truncated_is_weights_match_the_reference_and_are_detached():
    g = torch.Generator().manual_seed(0)
    old = (torch.randn(3, 7, generator=g) - 1).requires_grad_()
    rollout = torch.randn(3, 7, generator=g) - 1
    mask = (torch.rand(3, 7, generator=g) > 0.3).long()
    for cap in (1.5, 2.0, 10.0):
        w, stats = truncated_is_weights(old, rollout, mask, cap)
        ref = _reference_weights(old.detach(), rollout, mask, cap)
        assert torch.allclose(w, ref, atol=1e-6) and not w.requires_grad
        assert float(w.max()) <= cap and bool((w[mask == 0] == 0).all())
        ratios = torch.exp(old.detach() - rollout)[mask.bool()]
        assert stats["tis/truncated_frac"] == pytest.approx(float((ratios > cap).float().mean()))
        assert stats["tis/weight_mean"] == pytest.approx(float(ref[mask.bool()].mean()), abs=1e-6)


def test_masked_tokens_get_no_weight_whatever_their_logprobs():
    mask = T([[1, 0, 1]])
    w, _ = truncated_is_weights(T([[0.0, 50.0, 0.0]]), T([[0.0, -50.0, float("-inf")]]), mask)
    assert w[0, 1] == 0 and w[0, 0] == 1 and w[0, 2] == 2.0  # a token the rollout gave no mass: truncated at C


def test_weighted_policy_loss_matches_the_reference_and_weighs_the_gradient():
    g = torch.Generator().manual_seed(1)
    new = (torch.randn(2, 6, generator=g) * 0.5).requires_grad_()
    old, rollout, adv = torch.randn(2, 6, generator=g) * 0.5, torch.randn(2, 6, generator=g), torch.randn(2, 6, generator=g)
    mask = T([[1, 1, 1, 0, 1, 1], [1, 0, 1, 1, 1, 0]])
    w, _ = truncated_is_weights(old, rollout, mask)
    loss, _ = policy_loss(new, old, adv, mask, is_weights=w)
    assert loss.item() == pytest.approx(_reference_policy_loss(new.detach(), old, adv, mask, w), abs=1e-6)
    loss.backward()
    plain = new.detach().clone().requires_grad_()
    policy_loss(plain, old, adv, mask)[0].backward()
    on = mask.bool()
    assert torch.allclose(new.grad[on], (w * plain.grad)[on], atol=1e-7)  # each token's gradient scaled by its w


def test_weight_one_everywhere_leaves_the_loss_unchanged_bit_for_bit():
    g = torch.Generator().manual_seed(2)
    new, old, adv = torch.randn(3, 9, generator=g), torch.randn(3, 9, generator=g), torch.randn(3, 9, generator=g)
    v, ret = torch.randn(3, 9, generator=g), torch.randn(3, 9, generator=g)
    mask = (torch.rand(3, 9, generator=g) > 0.2).long()
    ones, _ = truncated_is_weights(old, old, mask)  # the rollout's log-probs are pi_old's own: w = 1
    assert bool((ones[mask.bool()] == 1).all())
    for cfg in (PPOConfig(), PPOConfig(kl_coef=0.1, whiten_advantages=False)):
        a, sa = ppo_loss(new, old, adv, v, ret, mask, cfg)
        b, sb = ppo_loss(new, old, adv, v, ret, mask, cfg, is_weights=ones)
        assert torch.equal(a, b) and sa == sb


def test_weights_reach_the_policy_term_only():
    g = torch.Generator().manual_seed(3)
    new, old, adv = torch.randn(2, 5, generator=g), torch.randn(2, 5, generator=g), torch.randn(2, 5, generator=g)
    ret, mask = torch.randn(2, 5, generator=g), torch.ones(2, 5)
    v = torch.randn(2, 5, generator=g).requires_grad_()
    half = torch.full((2, 5), 0.5)
    _, s1 = ppo_loss(new, old, adv, v, ret, mask, is_weights=half)
    _, s0 = ppo_loss(new, old, adv, v, ret, mask)
    assert s1["losses/value"] == s0["losses/value"]
    assert s1["losses/policy"] == pytest.approx(0.5 * s0["losses/policy"])
    assert PPOConfig().tis_cap == 2.0
