"""The notebooks' small views (`rsi_lite.teach.viz`): the harness chart draws the committed figures as they are.
Run: pytest tests/teach/test_viz.py
"""

from rsi_lite.teach.viz import BASE_HARNESSES_CORE, harness_figure


def test_the_harness_chart_draws_each_harness_with_its_successes_out_of_its_episodes():
    fig = harness_figure()
    bars, dots = fig.data
    assert list(bars.x) == ["plain", "state_machine", "exemplar", "verifier_feedback"]
    assert list(bars.y) == [v[0] for v in BASE_HARNESSES_CORE.values()]
    assert list(bars.text) == ["0/135", "4/135", "10/135", "16/135"]
    assert list(dots.y) == [v[3] for v in BASE_HARNESSES_CORE.values()]
    # every row's percentage is its successes over its episodes (the constant is copied, not retyped wrong)
    assert all(abs(100 * s / n - pct) < 0.01 for pct, s, n, _ in BASE_HARNESSES_CORE.values())


def test_the_funnel_chart_puts_each_funnel_on_its_own_discovery_episodes_and_labels_the_counts():
    from rsi_lite.teach.viz import FUNNEL_STEPS, KIT_FUNNEL_RSR_CORE, funnel_figure

    mine = {"discovery_episodes": 2, "discovery_successes": 1, "source_successes": 1, "approved": 1, "resolves": 1,
            "resolve_successes": 0, "examples": 0}
    fig = funnel_figure({"kit": KIT_FUNNEL_RSR_CORE, "mine": mine})
    kit, yours = fig.data
    assert list(kit.y) == [label for _, label in FUNNEL_STEPS]
    assert kit.x[0] == 100.0 and yours.x[0] == 100.0
    assert list(kit.text) == ["312", "142", "91", "91", "182", "106", "66"]
    assert yours.x[1] == 50.0 and yours.x[-1] == 0.0


def test_the_checks_chart_shows_each_family_and_the_measured_verdicts():
    from rsi_lite.teach.viz import KIT_CORE_VERDICTS, checks_figure

    fig = checks_figure({"file_ops": [3, 4, 4], "data_csv": [5, 6]})
    boxes = [t for t in fig.data if t.type == "box"]
    bars = [t for t in fig.data if t.type == "bar"]
    assert [b.name for b in boxes] == ["data_csv", "file_ops"] and list(boxes[1].y) == [3, 4, 4]
    assert list(bars[0].y) == [v[0] for v in KIT_CORE_VERDICTS.values()]
    assert list(bars[1].y) == [100 * v[1] for v in KIT_CORE_VERDICTS.values()]
