"""The widgets' curves and the exercise checker (the browser test drives the real widgets).
Run: pytest tests/teach/test_widgets.py
"""

import pytest

from rsi_lite.algos.advantages import reference_tb_gae
from rsi_lite.teach.exercises import check_tb_gae
from rsi_lite.teach.widgets import (
    SCENARIOS,
    advantage_curves,
    batch_advantages,
    fdr_spr_explorer,
    reward_curves,
    sequence_layout,
    tb_gae_explorer,
    turn_reward_curves,
    turn_reward_explorer,
    turn_starts,
    value_of,
)


def test_reward_curves_show_fdr_paying_failures_above_a_success():
    c = reward_curves(total_checks=20, divisor=12, alpha=0.5)
    assert c["fdr_failure"][19] > 1.0 and c["fdr_success"] > 1.0  # FDR pays a failure at 19/20 over 1.5
    assert max(c["spr_failure"]) <= 0.5 < c["spr_success"] == 1.0  # SPR: every failure below any success
    assert reward_curves(20, 24, 0.5)["fdr_failure"][19] < 1.0  # a larger divisor damps FDR
    kit = reward_curves(total_checks=6, divisor=5, alpha=0.5)  # the widget's default: a kit-sized task
    assert kit["fdr_failure"][5] == 1.0 == kit["spr_success"] and kit["spr_failure"][5] == 0.5


def test_fdr_ranks_a_near_miss_above_a_success_and_spr_never_does():
    b = batch_advantages()
    success_small, near_miss = 0, 2  # the success on a 4-check task; a failure that passed 5 of 6
    assert b["fdr"][near_miss] > b["fdr"][success_small] and b["fdr_advantage"][near_miss] > b["fdr_advantage"][success_small]
    successes = [i for i, (s, _, _) in enumerate(b["batch"]) if s]
    failures = [i for i, (s, _, _) in enumerate(b["batch"]) if not s]
    assert min(b["spr_advantage"][i] for i in successes) > max(b["spr_advantage"][i] for i in failures)
    assert b["spr_advantage"][near_miss] > 0  # SPR promises the ranking, not the sign: above this batch's mean
    assert abs(sum(b["spr_advantage"])) < 1e-5 and abs(sum(b["fdr_advantage"])) < 1e-5  # whitened


def test_advantage_curves_observation_length_only_moves_naive_gae():
    short = advantage_curves([5, 5], observation_length=10, gamma=0.9, lam=0.9)
    long = advantage_curves([5, 5], observation_length=200, gamma=0.9, lam=0.9)
    assert short["tb_gae"] == long["tb_gae"] and short["gae"] == long["gae"]
    assert long["naive_gae"][0] < short["naive_gae"][0]  # decayed through 200 observation tokens
    # TB-GAE: no decay inside an action, one step of (gamma*lambda) per boundary
    assert short["tb_gae"][:5] == [short["tb_gae"][0]] * 5
    ones = advantage_curves([3, 4], 50, 1.0, 1.0)
    assert ones["tb_gae"] == ones["gae"] == ones["naive_gae"]
    assert sequence_layout([2, 1], 3, prompt_length=1) == [0, 1, 1, 0, 0, 0, 1]


def test_per_token_and_per_turn_discounts_are_kept_apart():
    base = advantage_curves([4, 4, 4], 20, gamma=0.9, lam=0.9, gamma_turn=1.0, lam_turn=1.0)
    assert base["tb_gae"] == pytest.approx([1.0] * 12)  # per-turn 1: TB-GAE ignores the per-token gamma
    assert base["gae"][0] < 0.5  # while GAE decays over 11 action tokens
    turn = advantage_curves([4, 4, 4], 20, gamma=0.9, lam=0.9, gamma_turn=0.8, lam_turn=1.0)
    assert turn["gae"] == base["gae"]  # the per-turn gamma does not touch GAE
    assert turn["tb_gae"][0] == pytest.approx(0.8 ** 2) and turn["tb_gae"][4] == pytest.approx(0.8)
    assert turn["turn_starts"] == [4, 8] == turn_starts(sequence_layout([4, 4, 4], 20))


def test_a_critic_changes_the_advantages_and_they_match_the_reference():
    mask = sequence_layout([3, 2], 5)
    v = value_of("V rises 0.2 -> 0.9 (a critic that grows confident)", len(mask))
    c = advantage_curves([3, 2], 5, 0.95, 0.9, values=v, gamma_turn=0.9, lam_turn=0.8)
    on = [i for i, m in enumerate(mask) if m]
    rewards = [0.0] * len(mask)
    rewards[on[-1]] = 1.0
    want = reference_tb_gae(rewards, v, mask, True, 0.9, 0.8)
    assert c["tb_gae"] == pytest.approx([want[i] for i in on], abs=1e-6)
    assert c["values"] == pytest.approx([v[i] for i in on])
    assert c["tb_gae"] != advantage_curves([3, 2], 5, 0.95, 0.9, gamma_turn=0.9, lam_turn=0.8)["tb_gae"]


def test_per_turn_rewards_blame_the_turn_that_deleted_app_and_the_final_reward_blames_all_alike():
    lengths, verdicts = SCENARIOS["solves in turn 1, then deletes /app in turn 3"]
    final = turn_reward_curves(lengths, verdicts, "final", value=0.5, lam_turn=1.0)
    turn = turn_reward_curves(lengths, verdicts, "turn", value=0.5, lam_turn=1.0)
    assert final["rewards"] == [0.0, 0.0, 0.0] and turn["rewards"] == [1.0, 0.0, -1.0]
    assert final["per_turn"] == pytest.approx([-0.5] * 3)  # the solving command blamed as much as rm -r /app
    for lam in (0.0, 0.5, 0.95):
        f = turn_reward_curves(lengths, verdicts, "final", value=0.5, lam_turn=lam)["per_turn"]
        t = turn_reward_curves(lengths, verdicts, "turn", value=0.5, lam_turn=lam)["per_turn"]
        assert f[0] <= 0 and f[0] - f[2] <= 0.5  # the final reward never credits the turn that solved it
        assert t[0] - t[2] > 1.0  # per turn: the deletion is blamed well apart from the solving command
    # how much of turn 3's penalty flows back to turn 1 is lambda's: 1 - 1.5 lambda^2 (V = 0.5)
    assert turn_reward_curves(lengths, verdicts, "turn", value=0.5, lam_turn=0.5)["per_turn"][0] > 0
    assert turn_reward_curves(lengths, verdicts, "turn", value=0.5, lam_turn=0.95)["per_turn"][0] == \
        pytest.approx(1 - 1.5 * 0.95 ** 2)
    lengths, verdicts = SCENARIOS["solves in turn 1, then two idle commands"]
    final = turn_reward_curves(lengths, verdicts, "final", value=0.0, lam_turn=0.95)
    turn = turn_reward_curves(lengths, verdicts, "turn", value=0.0, lam_turn=0.95)
    assert min(final["per_turn"]) > 0.8  # the idle commands are credited with the success
    assert turn["per_turn"] == pytest.approx([1.0, 0.0, 0.0])  # only the command that solved it
    with pytest.raises(ValueError, match="timing"):
        turn_reward_curves(lengths, verdicts, "episode")


def test_widgets_build():
    box = fdr_spr_explorer()
    assert len(box.children) == 3
    box.children[0].children[0].value = 30  # moving a slider redraws without error
    assert "FDR" in box.children[1].value
    plots = [o for o in box.children[2].outputs if "application/vnd.plotly.v1+json" in o["data"]]
    assert len(plots) == 1  # one figure, replaced on each redraw, not appended
    tb = tb_gae_explorer([4, 6, 3])
    assert len(tb.children) == 4

    def traces():
        (plot,) = tb.children[1].outputs
        return {t["name"].split(" ")[0]: t["y"] for t in plot["data"]["application/vnd.plotly.v1+json"]["data"]}

    before = traces()
    tb.children[0].children[2].value = 200  # the observation length moves only naive GAE
    after = traces()
    assert after["TB-GAE"] == before["TB-GAE"] and after["GAE"] == before["GAE"]
    assert after["naive"] != before["naive"]
    tb.children[2].children[0].value = 0.7  # gamma per turn moves TB-GAE only
    turned = traces()
    assert turned["TB-GAE"] != after["TB-GAE"] and turned["GAE"] == after["GAE"]
    tb.children[3].value = "V = 0.5 everywhere (a critic that expects a coin flip)"
    assert traces()["V"] == [0.5] * 13
    tr = turn_reward_explorer()
    assert "+0.00" in tr.children[2].value  # the final reward: 0 on every turn of the /app episode
    tr.children[3].value = "turn"
    assert "+1.00, +0.00, -1.00" in tr.children[2].value


def test_exercise_checker_accepts_the_reference_and_rejects_a_stub():
    ok, msg = check_tb_gae(reference_tb_gae)
    assert ok, msg

    def stub(rewards, values, mask, done, gamma_turn, lam_turn):
        raise NotImplementedError("YOUR CODE HERE")

    assert check_tb_gae(stub) == (False, "not yet: NotImplementedError: YOUR CODE HERE")
    wrong = lambda r, v, m, d, g, lam: [0.0] * len(r)  # noqa: E731
    assert not check_tb_gae(wrong)[0]
