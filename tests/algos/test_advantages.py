"""GAE and TB-GAE: hand-computed multi-turn examples, the gamma = lambda = 1 equivalence, terminal rewards,
bootstrapping, padding, and the vectorised version against a plain-Python loop.  Run: pytest tests/algos/test_advantages.py
"""

import random

import pytest
import torch

from rsi_lite.algos.advantages import ESTIMATORS, reference_tb_gae, tb_gae, terminal_rewards, token_gae, turn_index

T = torch.tensor


def test_docstring_example_by_hand():
    mask = T([[0, 1, 1, 0, 1]])
    values = T([[9.0, .5, .6, 9.0, .8]])  # values on masked tokens must not matter
    rewards = terminal_rewards(T([1.0]), mask)
    adv, ret = tb_gae(rewards, values, mask, T([True]), gamma_turn=0.9, lam_turn=0.5)
    assert torch.allclose(adv, T([[0, .31, .21, 0, .2]]))
    assert torch.allclose(ret, T([[0, .81, .81, 0, 1.0]]))


def test_the_registry_calls_each_estimator_with_discount_and_trace_decay_in_the_same_places():
    mask = T([[0, 1, 1, 0, 1]])
    values = T([[0.0, .5, .6, 0.0, .8]])
    rewards, done = terminal_rewards(T([1.0]), mask), T([True])
    assert set(ESTIMATORS) == {"tb_gae", "gae"}
    want = {"tb_gae": tb_gae(rewards, values, mask, done, gamma_turn=0.9, lam_turn=0.5),
            "gae": token_gae(rewards, values, mask, done, gamma=0.9, lam=0.5)}
    for name, f in ESTIMATORS.items():
        assert all(torch.equal(a, b) for a, b in zip(f(rewards, values, mask, done, 0.9, 0.5), want[name]))


def test_three_turns_by_hand_and_token_gae_differs():
    # turns: [1,2] | obs | [4] | obs obs | [7,8]; reward 1 at t=8
    mask = T([[0, 1, 1, 0, 1, 0, 0, 1, 1]])
    v = T([[0, .1, .2, 0, .3, 0, 0, .4, .5]])
    r = terminal_rewards(T([1.0]), mask)
    g, lam = 0.5, 0.5
    adv, _ = tb_gae(r, v, mask, T([True]), gamma_turn=g, lam_turn=lam)
    a8 = 1 - .5
    a7 = (.5 - .4) + a8
    a4 = (g * .4 - .3) + g * lam * a7
    a2 = (g * .3 - .2) + g * lam * a4
    a1 = (.2 - .1) + a2
    assert torch.allclose(adv, T([[0, a1, a2, 0, a4, 0, 0, a7, a8]]))
    gae, _ = token_gae(r, v, mask, T([True]), gamma=g, lam=lam)  # decays inside an action too
    assert gae[0, 1] != pytest.approx(a1)


def test_estimators_agree_exactly_when_gamma_and_lambda_are_one():
    torch.manual_seed(0)
    mask = (torch.rand(4, 30) > 0.4).long()
    v, r = torch.randn(4, 30), terminal_rewards(torch.rand(4), mask)
    done = T([True, False, True, False])
    a1, r1 = token_gae(r, v, mask, done, gamma=1.0, lam=1.0)
    a2, r2 = tb_gae(r, v, mask, done, gamma_turn=1.0, lam_turn=1.0)
    assert torch.equal(a1, a2) and torch.equal(r1, r2)


def test_terminal_reward_lands_on_the_last_action_token_never_a_masked_one():
    mask = T([[1, 1, 0, 0], [0, 0, 0, 0], [0, 1, 0, 1]])
    r = terminal_rewards(T([2.0, 3.0, 4.0]), mask)
    assert r.tolist() == [[0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 4]]
    # with zero values, the last action token's advantage is the whole reward, undecayed
    adv, _ = tb_gae(r, torch.zeros(3, 4), mask, T([True, True, True]), gamma_turn=0.5, lam_turn=0.5)
    assert adv[0, 1] == 2.0 and adv[2, 3] == 4.0 and adv[1].abs().sum() == 0
    assert (adv * (1 - mask)).abs().sum() == 0


def test_truncated_episodes_bootstrap_from_the_last_value():
    mask, v = T([[1, 0, 1]]), T([[.2, 0, .7]])
    r = torch.zeros(1, 3)
    adv, _ = tb_gae(r, v, mask, T([False]), gamma_turn=0.9, lam_turn=0.5)
    last = 0.9 * .7 - .7  # V_{N+1} := V_N, one boundary past the end
    assert adv[0, 2].item() == pytest.approx(last)
    assert adv[0, 0].item() == pytest.approx((0.9 * .7 - .2) + 0.45 * last)
    ended, _ = tb_gae(r, v, mask, T([True]), gamma_turn=0.9, lam_turn=0.5)
    assert ended[0, 2].item() == pytest.approx(-.7)


def test_padding_in_a_batch_changes_nothing():
    torch.manual_seed(1)
    mask = (torch.rand(1, 12) > 0.5).long()
    v, r = torch.randn(1, 12), torch.zeros(1, 12)
    r = terminal_rewards(T([1.0]), mask)
    alone, _ = tb_gae(r, v, mask, T([True]), gamma_turn=0.8, lam_turn=0.7)
    pad = lambda x, left, right: torch.nn.functional.pad(x, (left, right))  # noqa: E731
    other = (torch.rand(1, 19) > 0.5).long()
    batch_mask = torch.cat([pad(mask, 3, 4), other])
    batch_v = torch.cat([pad(v, 3, 4), torch.randn(1, 19)])
    batch_r = torch.cat([pad(r, 3, 4), terminal_rewards(T([0.5]), other)])
    both, _ = tb_gae(batch_r, batch_v, batch_mask, T([True, False]), gamma_turn=0.8, lam_turn=0.7)
    assert torch.allclose(both[0, 3:15], alone[0])


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_matches_the_plain_python_loop(seed):
    rng = random.Random(seed)
    B, L = 3, rng.randint(5, 40)
    mask = [[int(rng.random() > 0.45) for _ in range(L)] for _ in range(B)]
    values = [[rng.uniform(-1, 1) for _ in range(L)] for _ in range(B)]
    rewards = [[rng.uniform(-1, 1) if m and rng.random() < 0.2 else 0.0 for m in row] for row in mask]
    done = [rng.random() < 0.5 for _ in range(B)]
    g, lam = rng.uniform(0.5, 1), rng.uniform(0.5, 1)
    tb, _ = tb_gae(T(rewards), T(values), T(mask), T(done), gamma_turn=g, lam_turn=lam)
    tok, _ = token_gae(T(rewards), T(values), T(mask), T(done), gamma=g, lam=lam)
    for b in range(B):
        want_tb = reference_tb_gae(rewards[b], values[b], mask[b], done[b], g, lam)
        want_tok = reference_tb_gae(rewards[b], values[b], mask[b], done[b], g, lam, per_token=True)
        assert torch.allclose(tb[b], T(want_tb), atol=1e-5)
        assert torch.allclose(tok[b], T(want_tok), atol=1e-5)


def test_turn_index_counts_action_runs():
    assert turn_index(T([[0, 1, 1, 0, 1, 0, 0, 1]])).tolist() == [[0, 1, 1, 1, 2, 2, 2, 3]]


def test_turn_start_values_share_each_turns_first_value_and_give_one_advantage_per_turn():
    from rsi_lite.algos.advantages import turn_start_values

    mask = torch.tensor([[0, 1, 1, 1, 0, 0, 1, 1], [1, 1, 0, 1, 0, 1, 1, 0]])
    values = torch.arange(16, dtype=torch.float32).view(2, 8) / 10
    got = turn_start_values(values, mask)
    assert torch.allclose(got, T([[0.0, 0.1, 0.1, 0.1, 0.4, 0.5, 0.6, 0.6],
                                  [0.8, 0.8, 1.0, 1.1, 1.2, 1.3, 1.3, 1.5]]))
    # with them every token of a turn gets the same advantage; with the token values the tokens of a turn differ
    r = terminal_rewards(torch.tensor([1.0, 0.0]), mask)
    done = torch.ones(2, dtype=torch.bool)
    per_turn, _ = tb_gae(r, got, mask, done, 1.0, 0.95)
    per_token, _ = tb_gae(r, values, mask, done, 1.0, 0.95)
    for row in range(2):
        turns = turn_index(mask)[row]
        for k in turns[mask[row].bool()].unique():
            on = mask[row].bool() & (turns == k)
            assert per_turn[row][on].unique().numel() == 1
    assert per_token[0][mask[0].bool() & (turn_index(mask)[0] == 1)].unique().numel() > 1
    # the turn's advantage by hand: row 0, last turn: 1 - V(6) = 0.4; first turn: V(6) - V(1) + 0.95 * 0.4
    assert per_turn[0, 7] == pytest.approx(0.4) and per_turn[0, 1] == pytest.approx(0.6 - 0.1 + 0.95 * 0.4)
