"""The widgets' curves and the exercise checker (the browser test drives the real widget).
Run: pytest tests/teach/test_widgets.py
"""

from rsi_lite.algos.advantages import reference_tb_gae
from rsi_lite.teach.exercises import check_tb_gae
from rsi_lite.teach.widgets import advantage_curves, fdr_spr_explorer, reward_curves, sequence_layout, tb_gae_explorer


def test_reward_curves_show_fdr_paying_failures_above_a_success():
    c = reward_curves(total_checks=20, divisor=12, alpha=0.5)
    assert c["fdr_failure"][19] > 1.0 and c["fdr_success"] > 1.0  # FDR pays a failure at 19/20 over 1.5
    assert max(c["spr_failure"]) <= 0.5 < c["spr_success"] == 1.0  # SPR: every failure below any success
    assert reward_curves(20, 24, 0.5)["fdr_failure"][19] < 1.0  # a larger divisor damps FDR


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


def test_widgets_build():
    box = fdr_spr_explorer()
    assert len(box.children) == 3
    box.children[0].children[0].value = 30  # moving a slider redraws without error
    assert "FDR" in box.children[1].value
    plots = [o for o in box.children[2].outputs if "application/vnd.plotly.v1+json" in o["data"]]
    assert len(plots) == 1  # one figure, replaced on each redraw, not appended
    tb = tb_gae_explorer([4, 6, 3])
    assert len(tb.children) == 2

    def traces():
        (plot,) = tb.children[1].outputs
        return {t["name"]: t["y"] for t in plot["data"]["application/vnd.plotly.v1+json"]["data"]}

    before = traces()
    tb.children[0].children[2].value = 200  # the observation length moves only naive GAE
    after = traces()
    assert after["tb_gae"] == before["tb_gae"] and after["gae"] == before["gae"]
    assert after["naive_gae"] != before["naive_gae"]


def test_exercise_checker_accepts_the_reference_and_rejects_a_stub():
    ok, msg = check_tb_gae(reference_tb_gae)
    assert ok, msg

    def stub(rewards, values, mask, done, gamma_turn, lam_turn):
        raise NotImplementedError("YOUR CODE HERE")

    assert check_tb_gae(stub) == (False, "not yet: NotImplementedError: YOUR CODE HERE")
    wrong = lambda r, v, m, d, g, lam: [0.0] * len(r)  # noqa: E731
    assert not check_tb_gae(wrong)[0]
