"""Notebook 05's PPO update by hand (`rsi_lite.teach.ppo_by_hand`): it agrees with the library's `update` line by
line on a batch that exercises each line, and the check fails when the hand version is broken on purpose (the
advantage's sign, the clip, the whitening, where the reward sits), or says so when the batch cannot tell.
Run: pytest tests/teach/test_ppo_by_hand.py
"""

import pytest
import torch

from rsi_lite.teach import ppo_by_hand as hand
from rsi_lite.teach.ppo_by_hand import check_config, check_update, clip_objective, tiny_policy_factory


@pytest.fixture(scope="module")
def make_policy(tmp_path_factory):
    from rsi_lite.policy.model import random_model

    return tiny_policy_factory(random_model(tmp_path_factory.mktemp("ppo-by-hand") / "random"))


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def failing(check) -> set[str]:
    return {line.name.strip()[:2] for line in check.lines if not line.ok}


def test_the_hand_update_is_the_librarys_on_a_batch_that_exercises_it(make_policy):
    c = check_update(make_policy, check_config())
    assert c.ok, c.table()
    assert c.meaningful, c.facts
    assert c.facts["successes"] == 3 and c.facts["failures"] == 5 and c.facts["minibatches"] == 4
    assert c.facts["clipped tokens"] > 0 and c.facts["weights moved"] > 1e-3
    assert "| 7. weights after the optimizer steps |" in c.table()


def test_a_flipped_advantage_fails_the_check(make_policy, monkeypatch):
    right = hand.tb_gae_by_hand
    monkeypatch.setattr(hand, "tb_gae_by_hand", lambda *a: (-right(*a)[0], right(*a)[1]))
    c = check_update(make_policy, check_config())
    assert not c.ok and {"3.", "4.", "5.", "7."} <= failing(c), c.table()


def test_removing_the_clip_fails_the_check_so_clipping_is_exercised(make_policy, monkeypatch):
    right = hand.clipped_policy_loss
    monkeypatch.setattr(hand, "clipped_policy_loss", lambda lp, old, adv, m, low, high: right(lp, old, adv, m, 0.0, 1e9))
    c = check_update(make_policy, check_config())
    assert not c.ok and "5." in failing(c) and "7." in failing(c), c.table()


def test_unwhitened_advantages_fail_the_check(make_policy, monkeypatch):
    monkeypatch.setattr(hand, "whiten", lambda adv, mask: adv)
    c = check_update(make_policy, check_config())
    assert {"4.", "7."} <= failing(c), c.table()


def test_the_reward_on_the_first_action_token_fails_the_check(make_policy, monkeypatch):
    def first_token(trajs, mask, reward):
        r = torch.zeros(mask.shape)
        for i, t in enumerate(trajs):
            r[i, int(mask[i].nonzero().min())] = t.rewards[reward]
        return r

    monkeypatch.setattr(hand, "token_rewards", first_token)
    c = check_update(make_policy, check_config())
    assert {"1.", "3.", "7."} <= failing(c), c.table()


def test_a_batch_of_successes_alone_is_not_meaningful(make_policy, monkeypatch):
    monkeypatch.setattr(hand, "EPISODES", [(a, o, b, 1.0) for a, o, b, _ in hand.EPISODES])
    c = check_update(make_policy, check_config())
    assert c.facts["failures"] == 0 and not c.meaningful


def test_at_the_stages_rates_nothing_clips_so_the_check_would_not_mean_anything(make_policy):
    c = check_update(make_policy, check_config(actor_lr=1e-4, critic_lr=5e-4))
    assert c.ok and c.facts["clipped tokens"] == 0 and not c.meaningful


def test_the_clipped_objective():
    assert clip_objective([0.5, 1.0, 7.0], 1.0, 0.7, 6.0) == [0.5, 1.0, 6.0]
    assert clip_objective([0.5, 1.5], 1.0, 0.8, 1.2) == [0.5, 1.2]  # above 1.2 a good token stops pulling
    assert clip_objective([0.5, 3.0], -1.0, 0.7, 6.0) == [-0.7, -3.0]  # below 0.7 a bad one stops pushing
    fig = hand.clip_objective_figure()
    assert len(fig.data) == 6
