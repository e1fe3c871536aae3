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
