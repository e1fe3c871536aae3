"""The report's held-out claim: judged by a paired bootstrap over the held-out tasks, and by the runs' spread for
rows that carry no per-task counts.

Run: pytest tests/report/test_heldout_claims.py
"""

from rsi_lite.report.claims import heldout_claims


def _rep(before: dict, after: dict, kinds: dict) -> dict:
    def row(stage, by_task):
        s, e = sum(v[0] for v in by_task.values()), sum(v[1] for v in by_task.values())
        return {"stage": stage, "success": s / e, "runs": [s / e], "by_task": by_task}

    return {"heldout": {"0": {"RPR-1": {"tasks": len(before), "task_kinds": kinds,
                                        "rows": [row("RSR-1", before), row("RPR-1", after)]}}}}


def test_a_gain_on_most_tasks_holds_and_names_no_fallen_kind():
    names = [f"t{i}" for i in range(30)]
    kinds = {n: "A" if i < 15 else "B" for i, n in enumerate(names)}
    before = {n: [1, 3] for n in names}
    after = {n: [3, 3] if i % 3 else [1, 3] for i, n in enumerate(names)}
    (c,) = heldout_claims(_rep(before, after, kinds))
    assert c["verdict"] == "holds", c
    assert "paired bootstrap over 30 tasks" in c["figures"] and "no kind fallen" in c["figures"]


def test_a_gain_on_one_kind_and_a_loss_on_another_is_not_shown_and_names_the_fallen_kind():
    names = [f"t{i}" for i in range(20)]
    kinds = {n: "A" if i < 10 else "B" for i, n in enumerate(names)}
    before = {n: [1, 3] if kinds[n] == "A" else [3, 3] for n in names}
    after = {n: [3, 3] if kinds[n] == "A" else [1, 3] for n in names}
    (c,) = heldout_claims(_rep(before, after, kinds))
    assert c["verdict"] == "not shown", c
    assert "fallen beyond their interval: B" in c["figures"]


def test_rows_without_per_task_counts_fall_back_to_the_runs_spread():
    rep = _rep({"t": [1, 3]}, {"t": [2, 3]}, {"t": "A"})
    for r in rep["heldout"]["0"]["RPR-1"]["rows"]:
        del r["by_task"]
    (c,) = heldout_claims(rep)
    assert "spread" in c["figures"] and "bootstrap" not in c["figures"]


def _stages(rsr: list[float], rpr: list[float]) -> list[dict]:
    return [{"stage": name, "suites": {"core": {"success": sum(runs) / len(runs), "runs": runs}}}
            for name, runs in (("RSR-1", rsr), ("RPR-1", rpr))]


def test_the_refinement_sentence_reads_its_verdict_from_the_figures():
    from rsi_lite.report.claims import refinement_sentences

    names = [f"t{i}" for i in range(30)]
    kinds = {n: "A" for n in names}
    rep = _rep({n: [1, 3] for n in names}, {n: [3, 3] for n in names}, kinds)
    rep.update(stages=_stages([0.30, 0.32, 0.28], [0.31, 0.33, 0.30]), controls={}, selection={},
               curves={"0": {"rpr-1": {"probes": [{"by_kind": {"A": [8, 16], "B": [0, 16]}},
                                                  {"by_kind": {"A": [14, 16], "B": [0, 16]}}]}}})
    (s,) = refinement_sentences(rep)
    assert ("the 1 kind its first probe found learnable its probes went 8/16 -> 14/16 over its steps (+37.5 points, "
            "standard error 15.0: beyond two standard errors)") in s
    assert "inside the run-to-run spread" in s
    assert s.endswith("refinement learned on the kinds it trained on, on fresh instances, without making the agent "
                      "worse on `core` beyond the spread.")
    rep["stages"] = _stages([0.40, 0.41, 0.40], [0.20, 0.21, 0.20])
    (s,) = refinement_sentences(rep)
    assert "below the run-to-run spread" in s and s.endswith("refinement made the agent worse on `core` beyond the spread.")
    # with the per-task evaluations (a one-seed run), core is judged by its paired interval instead
    rep["room"] = {"0": {"RPR-1": {"core": {"paired": {"delta": -0.2, "low": -0.3, "high": -0.1, "tasks": 45}}}}}
    (s,) = refinement_sentences(rep)
    assert "on `core` it moved -20.0 points against RSR-1, below its 95% interval [-30.0, -10.0] over 45 tasks" in s
    assert s.endswith("refinement made the agent worse on `core` beyond its interval.")
    rep["room"]["0"]["RPR-1"]["core"]["paired"].update(delta=-0.02, low=-0.09, high=0.05)
    (s,) = refinement_sentences(rep)
    assert "inside its 95% interval" in s and s.endswith("without making the agent worse on `core` beyond its interval.")
    del rep["room"]
    rep["stages"] = _stages([0.30, 0.32, 0.28], [0.31, 0.33, 0.30])
    rep["heldout"]["0"]["RPR-1"]["rows"][1]["by_task"] = {n: [1, 3] for n in names}
    (s,) = refinement_sentences(rep)
    assert s.endswith("no learning is shown: the gains are inside their spread or interval.")
    # the first probe found no kind learnable (each always or never solved): nothing to learn, said so
    del rep["heldout"]
    rep["curves"]["0"]["rpr-1"]["probes"] = [{"by_kind": {"A": [16, 16], "B": [0, 16]}},
                                             {"by_kind": {"A": [16, 16], "B": [0, 16]}}]
    (s,) = refinement_sentences(rep)
    assert "its first probe found no kind learnable (1 of 2 probed kinds always solved, the rest never)" in s
    assert s.endswith("PPO had nothing to learn here: its gradient needs kinds the actor solves sometimes, and the "
                      "checkpoint it started from offered none.")
    # a rise of the probes within two standard errors is no learning
    rep["curves"]["0"]["rpr-1"]["probes"] = [{"by_kind": {"A": [8, 16], "B": [0, 16]}},
                                             {"by_kind": {"A": [10, 16], "B": [0, 16]}}]
    (s,) = refinement_sentences(rep)
    assert "(+12.5 points, standard error 17.4: within two standard errors)" in s
    assert s.endswith("no learning is shown: the gains are inside their spread or interval.")


def test_a_fall_beyond_the_interval_is_said_and_so_is_a_drift_of_the_last_turn():
    """The seed-1 cpu run's RPR-1 (docs/experiments.md, session 6): held-out success fell with its interval below
    zero, and a third of its last replies ran nothing. The sentence says both, computed from the figures."""
    from rsi_lite.report.claims import refinement_sentences

    names = [f"t{i}" for i in range(30)]
    rep = _rep({n: [3, 3] for n in names}, {n: [1, 3] for n in names}, {n: "A" for n in names})
    (c,) = heldout_claims(rep)
    assert c["verdict"] == "refuted here (a fall beyond the 95% interval)", c
    rep.update(stages=_stages([0.30, 0.32, 0.28], [0.31, 0.33, 0.30]), controls={}, selection={}, curves={"0": {"rpr-1": {}}})
    turn = {"turn": 3, "done": 0.5, "tokens": 8, "nll": 0.1}
    before, after = rep["heldout"]["0"]["RPR-1"]["rows"]
    before["turns"], after["turns"] = [{**turn, "actions": 90, "unparsed": 0.03}], [{**turn, "actions": 90, "unparsed": 0.33}]
    (s,) = refinement_sentences(rep)
    assert "its replies drifted: on the held-out kinds 33% of its turn-3 replies ran nothing (unparsed), against 3% " \
        "for RSR-1" in s
    assert s.endswith("refinement made the agent worse on fresh instances of the kinds it trained on.")
    after["turns"] = [{**turn, "actions": 90, "unparsed": 0.05}]  # within two standard errors: not said
    assert "drifted" not in refinement_sentences(rep)[0]
    # one reply at that turn in each row, 0% against 100%: too few to judge, not said
    before["turns"], after["turns"] = [{**turn, "actions": 1, "unparsed": 0.0}], [{**turn, "actions": 1, "unparsed": 1.0}]
    assert "drifted" not in refinement_sentences(rep)[0]
