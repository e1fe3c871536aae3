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


def test_the_credit_chart_draws_the_three_baselines_per_kind():
    from rsi_lite.teach.viz import KIT_CREDIT_PPO_S0, KIT_EV_PPO_S0, credit_figure

    fig = credit_figure()
    assert len(fig.data) == 3 and list(fig.data[0].x) == list(KIT_CREDIT_PPO_S0)
    assert list(fig.data[2].y) == [0.0] * len(KIT_CREDIT_PPO_S0)  # a constant pushes no success's token down
    assert round(fig.data[0].y[1], 6) == 28.0  # "Count the data rows of": 28% under the token values
    assert len(KIT_EV_PPO_S0) == 16 and max(KIT_EV_PPO_S0) < 0.3


def test_the_last_turn_chart_reads_turns_csv(tmp_path):
    from rsi_lite.teach.viz import last_turn_rows, turns_figure

    p = tmp_path / "turns.csv"
    p.write_text("seed,stage,where,turn,actions,unparsed,done,tokens,nll\n"
                 "1,rpr-1,step-000,1,24,0.0,0.0,30,0.1\n1,rpr-1,step-000,3,23,0.1,0.5,12,0.6\n"
                 "1,rpr-1,step-001,3,23,0.4,0.1,20,0.9\n1,rpr-1,heldout:RSR-1,3,184,0.03,0.85,8,0.03\n"
                 "1,rpr-1,heldout:RPR-1,3,203,0.33,0.12,21,0.22\n1,rpr-2,step-000,4,20,0.9,0.0,1,1\n"
                 "2,rpr-1,step-000,3,20,0.9,0.0,1,1\n")
    rows = last_turn_rows(p)
    assert rows["seed"] == "1" and rows["turn"] == 3
    assert rows["steps"] == [(0, 0.1, 0.5), (1, 0.4, 0.1)]
    assert rows["heldout"] == {"RSR-1": (0.03, 0.85), "RPR-1": (0.33, 0.12)}
    fig = turns_figure(rows)
    assert list(fig.data[0].y) == [50.0, 10.0] and list(fig.data[1].y) == [10.0, 40.0] and len(fig.data) == 6


def test_the_heldout_chart_draws_each_kind_before_and_after_with_its_counts():
    from rsi_lite.teach.viz import heldout_figure

    pairs = [{"seed": "1", "phase": "RPR-1", "kind": "x/easy: Count", "before_stage": "RSR-1", "before": (42, 42),
              "after": (35, 42)},
             {"seed": "1", "phase": "RPR-1", "kind": "x/easy: Write", "before_stage": "RSR-1", "before": (18, 42),
              "after": (2, 42)}]
    fig = heldout_figure(pairs)
    assert [t.name for t in fig.data] == ["RSR-1", "RPR-1"]
    assert list(fig.data[0].y) == ["Count", "Write"] and list(fig.data[1].text) == ["35/42", "2/42"]
    assert "60/84 -> 37/84" in fig.layout.title.text


def test_the_critic_chart_draws_an_off_scale_value_at_the_floor_with_its_value():
    from rsi_lite.teach.viz import critic_ev_figure

    fig = critic_ev_figure([0, 1, 2], {"inherited": [0.49, 0.52, None], "reset": [0.0, -20.54, 0.23]}, "t")
    inherited, reset = fig.data
    assert list(inherited.y) == [0.49, 0.52, None] and list(inherited.text) == ["", "", ""]
    assert list(reset.y) == [0.0, -1.0, 0.23] and list(reset.text) == ["", "-20.5", ""]
    assert reset.marker.symbol[1] == "circle-open" and fig.layout.yaxis.range[0] < -1
