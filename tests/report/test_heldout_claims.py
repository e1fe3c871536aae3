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
