"""docs/results/ from a run directory (`rsi_lite.teach.results`), on a synthetic run: the loop's real protocol with
recorded stages (`fake_stages`), then known per-step metrics and probes written into it; every summary must carry
those numbers, and a summary whose source the run lacks is not written (a stale one is removed).
Run: pytest tests/teach/test_results.py
"""

import csv
import json

from rsi_lite.loop.phases import start
from rsi_lite.paths import REPO
from rsi_lite.teach.results import main, write

INHERITED = [0.55, 0.61, 0.55]
RESET = [-0.0, 0.11, 0.25]


def steps(d, ev, success):
    d.joinpath("metrics.jsonl").write_text("".join(
        json.dumps({"step": k, "phase": "joint" if k > 1 else "warmup", "losses/explained_variance_before": e,
                    "success/mean": success, "ratio/min": 0.9, "ratio/max": 1.2}) + "\n" for k, e in enumerate(ev)))


def probe(d, k, before, episodes, solved):
    p = d / f"probe-{k:03d}"
    p.mkdir(parents=True)
    p.joinpath("metrics.json").write_text(json.dumps({"before_step": before, "episodes": episodes,
                                                      "pool_success": solved / episodes, "tasks": 48,
                                                      "tasks_solved": 0, "tasks_learnable": 0, "by_task": {}}))
    p.joinpath("DONE").write_text("")


def heldout_and_turns(run):
    """One step's batch in rpr-1 and RPR-1's held-out measurement: the incoming RSR-1 solves the task once in two,
    the actor twice, and its last reply runs nothing once."""
    from dataclasses import replace

    from rsi_lite.rollout.trajectory import write_trajectories

    from ..eval.test_turns import episode

    cmd = "```bash\nls\n```"
    (run / "rpr-1" / "step-000").mkdir(parents=True, exist_ok=True)
    write_trajectories([episode([cmd, "TASK COMPLETE"], [[-0.1], [-0.2]])], run / "rpr-1" / "step-000" / "trajectories.jsonl")
    h = run / "heldout-rpr-1"
    (h / "kinds.json").parent.mkdir(parents=True)
    (h / "kinds.json").write_text(json.dumps({"per_kind": 1, "tasks": {"h0": "Copy"}}))
    for stage, won, last in (("rsr-1", [1, 0], "TASK COMPLETE"), ("rpr-1", [1, 1], "prose")):
        e = h / f"eval-{stage}"
        e.mkdir()
        write_trajectories([replace(episode([cmd, last if i else "TASK COMPLETE"], [[-0.1], [-0.2]]), task="h0",
                                    verifier={"strict": w}) for i, w in enumerate(won)], e / "trajectories.jsonl")
        e.joinpath("results.json").write_text(json.dumps({"checkpoint": stage, "suites": {"tasks": {
            "success": sum(won) / 2, "runs": [sum(won) / 2], "strict": sum(won), "episodes": 2}}}))
        e.joinpath("DONE").write_text("")


def rows(path):
    return list(csv.DictReader(path.open()))


def test_the_summaries_carry_the_runs_numbers(tmp_path, fake_stages):
    run = tmp_path / "r"
    start(run, "tiny", controls=("direct-ppo", "critic-reset"), log=lambda *_: None)
    steps(run / "rpr-2", INHERITED, 0.6)
    steps(run / "rpr-2-critic-reset", RESET, 0.4)
    heldout_and_turns(run)
    steps(run / "control-direct-ppo", [-0.9, 0.1], 0.0)
    for k, before in enumerate((0, 8, 14)):
        probe(run / "control-direct-ppo", k, before, 96, 0)
    out = tmp_path / "results"
    out.mkdir()  # an earlier direct-PPO run's files: this run has the control itself, so its own replace them
    (out / "direct_ppo_probes.csv").write_text("seed,before_step,episodes,successes\n0,0,64,0\n")
    (out / "MANIFEST.json").write_text(json.dumps({"from_other_runs": {"direct_ppo_probes.csv": {"stage": "x"}}}))
    manifest = main([str(run), "--out", str(out)])
    assert "from_other_runs" not in manifest

    ev = rows(out / "critic_ev.csv")
    assert [float(r["inherited"]) for r in ev] == INHERITED and [float(r["reset"]) for r in ev] == RESET
    assert [int(r["step"]) for r in ev] == [0, 1, 2]
    from rsi_lite.teach.results import critic_ev

    assert critic_ev(out / "critic_ev.csv") == ("0", [0, 1, 2], {"inherited": INHERITED, "reset": RESET})
    probes = rows(out / "direct_ppo_probes.csv")
    assert [(int(p["before_step"]), int(p["successes"]), int(p["episodes"])) for p in probes] == \
        [(0, 0, 96), (8, 0, 96), (14, 0, 96)]
    st = rows(out / "stages.csv")
    assert [r["stage"] for r in st if r["suite"] == "core"] == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2",
                                                               "Direct PPO", "RPR-2, critic reset"]
    assert {r["kind"] for r in st if r["stage"] == "Direct PPO"} == {"control"}
    curves = rows(out / "ppo_curves.csv")
    direct = [c for c in curves if c["stage"] == "control-direct-ppo"]
    assert [float(c["success/mean"]) for c in direct] == [0.0, 0.0]
    funnel = json.loads((out / "funnel.json").read_text())
    assert funnel["0"]["RSR-1"]["discovery_successes"] == 1 and funnel["0"]["RSR-2"]["discovery_successes"] == 2
    held = rows(out / "heldout.csv")
    assert [(r["stage"], r["kind"], r["successes"], r["episodes"]) for r in held] == \
        [("RSR-1", "Copy", "1", "2"), ("RPR-1", "Copy", "2", "2")]
    turns = {(r["stage"], r["where"], r["turn"]): r for r in rows(out / "turns.csv")}
    assert float(turns[("rpr-1", "step-000", "2")]["done"]) == 1.0
    assert float(turns[("rpr-1", "heldout:RPR-1", "2")]["unparsed"]) == 0.5
    assert float(turns[("rpr-1", "heldout:RSR-1", "2")]["unparsed"]) == 0.0
    assert manifest["not_in_this_run"] == [] and set(manifest["files"]) == {
        "stages.csv", "ppo_curves.csv", "critic_ev.csv", "direct_ppo_probes.csv", "direct_ppo_curves.csv",
        "heldout.csv", "turns.csv", "funnel.json"}
    from rsi_lite.teach.results import curve_rows

    assert [r["success/mean"] for r in curve_rows(out / "direct_ppo_curves.csv")] == [0.0, 0.0]
    assert [r["step"] for r in curve_rows(out / "ppo_curves.csv", "rpr-2")] == [0, 1, 2]
    assert json.loads((out / "MANIFEST.json").read_text())["command"].startswith("python -m rsi_lite.teach.results")
    assert manifest["profile"] == "tiny" and manifest["stages"] == ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
    assert manifest["controls"] == ["Direct PPO", "RPR-2, critic reset"]
    assert sum(manifest["files"].values()) < 100_000
    # read back, the stage table is what the notebooks would draw from the run's own report
    from rsi_lite.report.write import build
    from rsi_lite.teach.controls import stage_runs as report_runs
    from rsi_lite.teach.results import stage_runs

    assert stage_runs(out / "stages.csv") == report_runs(build(run)) and "RPR-2, critic reset" in report_runs(build(run))
    from rsi_lite.teach.controls import first_ev as report_ev
    from rsi_lite.teach.results import first_ev

    assert first_ev(out / "critic_ev.csv") == {k: v for k, v in report_ev(build(run)).items() if "rpr-2" in k} == \
        {"rpr-2": INHERITED[0], "rpr-2-critic-reset": RESET[0]}


def test_a_run_without_controls_writes_no_control_summaries_and_removes_stale_ones(tmp_path, fake_stages):
    run = tmp_path / "r"
    start(run, "tiny", log=lambda *_: None)
    out = tmp_path / "results"
    out.mkdir()
    (out / "critic_ev.csv").write_text("seed,step,inherited,reset\n0,0,0.9,0.9\n")  # another run's
    manifest = write(run, out)
    assert set(manifest["not_in_this_run"]) == {"critic_ev.csv", "direct_ppo_probes.csv", "direct_ppo_curves.csv",
                                                "heldout.csv", "turns.csv"}
    assert not (out / "critic_ev.csv").exists() and (out / "stages.csv").is_file()


def test_direct_ppo_run_on_its_own_is_added_with_where_it_came_from(tmp_path, fake_stages):
    """`--direct-ppo STAGE`: the branch run by `rsi-lite rpr --from base` (not a loop run) gives direct_ppo_probes.csv
    beside a run's summaries, which keep theirs; MANIFEST.json names the stage and whether it had finished."""
    import pytest

    from rsi_lite.teach.results import direct_probes

    run, out = tmp_path / "r", tmp_path / "results"
    start(run, "tiny", log=lambda *_: None)
    before = write(run, out)
    assert "direct_ppo_probes.csv" in before["not_in_this_run"]
    stage = tmp_path / "direct" / "rpr-1-from-base"
    stage.mkdir(parents=True)
    committed = json.loads((REPO / "configs" / "rpr-direct-ppo-cpu.json").read_text())
    stage.joinpath("config.json").write_text(json.dumps({**committed, "seed": 3, "calibration_step": 1}))
    with pytest.raises(ValueError, match=r"config\.json: not an RPR stage's config: .*calibration_step"):
        main(["--direct-ppo", str(stage), "--out", str(out)])
    stage.joinpath("config.json").write_text(json.dumps({**committed, "seed": 3}))
    with pytest.raises(ValueError, match="no finished probe"):
        main(["--direct-ppo", str(stage), "--out", str(out)])
    for k, (before_step, solved) in enumerate(((0, 0), (7, 1))):
        probe(stage, k, before_step, 64, solved)
    (stage / "step-000").mkdir()
    (stage / "step-000" / "metrics.json").write_text(json.dumps({"step": 0, "phase": "warmup", "success/mean": 0.0}))
    (stage / "step-000" / "DONE").write_text("")
    (stage / "step-001").mkdir()  # unfinished: not counted
    manifest = main(["--direct-ppo", str(stage), "--out", str(out)])

    assert [(p["seed"], p["before_step"], p["successes"], p["episodes"]) for p in direct_probes(
        out / "direct_ppo_probes.csv")] == [(3, 0, 0, 64), (3, 7, 1, 64)]
    from rsi_lite.teach.results import curve_rows

    assert [(r["step"], r["phase"], r["success/mean"]) for r in curve_rows(out / "direct_ppo_curves.csv")] == \
        [(0, "warmup", 0.0)]
    for name in ("direct_ppo_probes.csv", "direct_ppo_curves.csv"):
        assert name not in manifest["not_in_this_run"] and manifest["files"][name]
    record = manifest["from_other_runs"]["direct_ppo_probes.csv"]
    assert record == manifest["from_other_runs"]["direct_ppo_curves.csv"]
    assert record["stage"] == str(stage) and record["finished"] is False and record["steps_finished"] == 1
    assert record["steps"] == 28 and record["command"].startswith("python -m rsi_lite.teach.results --direct-ppo")
    from rsi_lite.teach.results import direct_source

    assert direct_source(out).startswith(f"{stage} (seed 3, 28 joint steps, not finished: 1 of its 30 steps")
    # the run's summaries written again: a run without the control keeps the files and their record
    again = write(run, out)
    assert again["from_other_runs"] == manifest["from_other_runs"] and (out / "direct_ppo_probes.csv").is_file()
    assert "direct_ppo_probes.csv" in again["files"] and "direct_ppo_probes.csv" not in again["not_in_this_run"]
    assert {k: v for k, v in manifest.items() if k not in ("files", "not_in_this_run", "from_other_runs")} == \
        {k: v for k, v in before.items() if k not in ("files", "not_in_this_run")}  # the run's own record is kept
    assert (out / "stages.csv").is_file()
    # a stage that did not start from Base is refused, named by its file and field
    stage.joinpath("config.json").write_text(json.dumps({"init": "runs/x/rsr-1/checkpoint", "seed": 0}))
    with pytest.raises(ValueError, match=r"config.json: init is"):
        main(["--direct-ppo", str(stage), "--out", str(out)])
    with pytest.raises(SystemExit):
        main(["--out", str(out)])  # neither a run nor --direct-ppo


def test_heldout_pairs_read_each_kind_before_and_after_its_phase(tmp_path):
    from rsi_lite.teach.results import heldout_pairs

    path = tmp_path / "heldout.csv"
    path.write_text("seed,phase,stage,kind,successes,episodes\n"
                    "1,RPR-1,RSR-1,a: Count,42,42\n1,RPR-1,RSR-1,b: Write,18,42\n"
                    "1,RPR-1,RPR-1,a: Count,35,42\n1,RPR-1,RPR-1,b: Write,2,42\n"
                    "1,RPR-2,RSR-2,a: Count,7,9\n")  # RPR-2 unfinished: no pair
    pairs = heldout_pairs(path)
    assert [(p["phase"], p["kind"], p["before_stage"], p["before"], p["after"]) for p in pairs] == [
        ("RPR-1", "a: Count", "RSR-1", (42, 42), (35, 42)), ("RPR-1", "b: Write", "RSR-1", (18, 42), (2, 42))]


def test_source_names_the_run_its_seeds_and_commit_from_the_manifest(tmp_path):
    from rsi_lite.teach.results import source

    (tmp_path / "MANIFEST.json").write_text(json.dumps({"run": "runs/cpu-s1", "profile": "cpu", "seeds": [1],
                                                        "stages": ["Base", "RSR-1"], "commit": "576d6c2b40b0",
                                                        "made": "2026-12-07 01:36 UTC"}))
    assert source(tmp_path) == "runs/cpu-s1 (cpu profile, seed 1: Base, RSR-1; commit 576d6c2, 2026-12-07 01:36 UTC)"


def test_the_committed_summaries_name_their_run():
    from rsi_lite.teach.results import RESULTS, heldout_pairs, source

    for d in (RESULTS, RESULTS / "forgetting"):
        assert source(d).startswith("runs/")
        if (d / "heldout.csv").is_file():
            assert heldout_pairs(d / "heldout.csv")
    from rsi_lite.teach.results import direct_probes, direct_source

    if (RESULTS / "direct_ppo_probes.csv").is_file():  # notebook 00 draws it
        assert direct_source(RESULTS).startswith("runs/") and direct_probes(RESULTS / "direct_ppo_probes.csv")
