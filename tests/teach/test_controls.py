"""Notebook 06's control questions: answered by the report's spread rule, None where a row is missing, read from a
report's rows and curves. Run: pytest tests/teach/test_controls.py
"""

from rsi_lite.teach.controls import DIRECT, FDR, QUESTIONS, RESET, control_answers, first_ev, stage_figure, stage_runs

RUNS = {"Base": {"core": [0, 0, 0]}, "RPR-2": {"core": [30, 32, 34], "val": [20, 20, 20]},
        DIRECT: {"core": [0, 0, 2.2]}, RESET: {"core": [20, 21, 22]}, FDR: {"core": [31, 33, 35]}}


def test_answers_follow_the_spread_rule():
    a = control_answers(RUNS, {"rpr-2": 0.5, "rpr-2-critic-reset": 0.0}, source="toy")
    assert set(a) == set(QUESTIONS) and all(v["source"] == "toy" for v in a.values())
    assert a["direct-ppo"]["answer"] is False  # +0.7 inside a spread of 2.2
    assert a["critic-reset"]["answer"] is True and "0.00 fresh, 0.50 inherited" in a["critic-reset"]["figures"]
    assert a["critic-reset-core"]["answer"] is True  # RPR-2 - reset = +11, spread 4
    assert a["reward-fdr"]["answer"] is False and "-1.0 points, spread 4.0" in a["reward-fdr"]["figures"]


def test_a_missing_row_is_not_an_answer():
    a = control_answers({"Base": {"core": [0]}, "RPR-2": {"core": [30]}}, {"rpr-2": 0.5}, source="demo")
    assert all(v["answer"] is None and v["figures"] is None for v in a.values())


def test_read_from_a_report():
    rep = {"stages": [{"stage": "Base", "suites": {"core": {"success": 0.0, "runs": [0.0, 0.0]}}},
                      {"stage": "RPR-2", "suites": {"core": {"success": 0.3}}}],
           "controls": {RESET: {"stage": RESET, "suites": {"core": {"success": 0.25, "runs": [0.2, 0.3]}}}},
           "curves": {0: {"rpr-2": {"losses/explained_variance_before": [0.4, 0.6]},
                          "rpr-2-critic-reset": {"losses/explained_variance_before": [None, 0.1]},
                          "rpr-1": {"losses/explained_variance_before": []}}}}
    runs = stage_runs(rep)
    assert runs == {"Base": {"core": [0.0, 0.0]}, "RPR-2": {"core": [30.0]}, RESET: {"core": [20.0, 30.0]}}
    assert first_ev(rep) == {"rpr-2": 0.4}
    fig = stage_figure({"toy": RUNS, "report": runs})
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 4 and list(bars[0].x) == ["Base", "RPR-2", DIRECT, RESET, FDR]
    assert list(bars[0].error_y.arrayminus) == [0, 2, 2.2 / 3, 1, 2]


def test_the_bootstrap_figure_draws_the_probes_and_the_batches_it_is_given():
    from rsi_lite.teach.controls import bootstrap_figure

    probes = [{"before_step": 0, "successes": 0, "episodes": 64}, {"before_step": 9, "successes": 2, "episodes": 64}]
    direct = [{"step": 0, "success/mean": 0.0}, {"step": 1, "success/mean": 0.0}, {"step": 2, "success/mean": 0.0}]
    after = [{"step": 0, "success/mean": 0.5}, {"step": 1, "success/mean": 0.625}]
    fig = bootstrap_figure(probes, direct, after)
    bars, left, right = fig.data
    assert list(bars.x) == [0, 9] and list(bars.y) == [0.0, 100 * 2 / 64]
    assert list(bars.text) == ["probe 0/64", "probe 2/64"]
    assert list(left.x) == [0, 1, 2] and list(left.y) == [0.0, 0.0, 0.0]
    assert list(right.x) == [0, 1] and list(right.y) == [50.0, 62.5]
    assert fig.layout.annotations[1].text == "PPO after RSR-1 (RPR-1)"
