"""The run-directory protocol (`rsi_lite.rundir`): DONE, steps, JSON reads, which stage starts from which.
Run: pytest tests/test_rundir.py"""

import pytest

from rsi_lite.rundir import DONE, StageDir, inherited_critic, rpr_actor, rpr_dir, rsr_checkpoint, rsr_dir, seed_dir


def test_a_stage_is_finished_only_once_done_is_written_and_unfinished_again_after_unmark(tmp_path):
    d = StageDir(tmp_path / "rpr-1")
    d.write("summary.json", {"steps": 3})
    assert not d.done and d.read("summary.json") == {"steps": 3}
    d.mark_done()
    assert d.done and (tmp_path / "rpr-1" / DONE).is_file()
    d.unmark()
    assert not d.done and d.read("summary.json") == {"steps": 3}  # its files stay


def test_steps_and_probes_are_numbered_and_listed_oldest_first_when_finished(tmp_path):
    d = StageDir(tmp_path)
    assert d.step(7).path == tmp_path / "step-007" and d.probe(12).path == tmp_path / "probe-012"
    assert d.step(7).number == 7 and d.probe(12).number == 12
    for k in (10, 2, 5):
        d.step(k).mark_done()
    (tmp_path / "step-011").mkdir()  # started, not finished: not listed
    d.probe(0).mark_done()
    assert [s.path.name for s in d.finished()] == ["step-002", "step-005", "step-010"]
    assert [s.path.name for s in d.finished("probe")] == ["probe-000"]


def test_a_read_names_the_file_and_a_default_serves_a_missing_one(tmp_path):
    d = StageDir(tmp_path)
    assert d.read("cost.json", {}) == {} and d.read("result.json", None) is None
    with pytest.raises(FileNotFoundError):
        d.read("results.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not JSON"):
        d.read("bad.json", {})


def test_a_stage_dir_is_a_path_where_one_is_expected(tmp_path):
    d = StageDir(tmp_path / "x")
    assert d / "a.json" == tmp_path / "x" / "a.json" and str(d) == str(tmp_path / "x")
    assert StageDir(d).path == d.path and f"{d}/DONE" == f"{tmp_path}/x/DONE"


def test_which_stage_starts_from_which(tmp_path):
    assert rsr_dir(tmp_path, 2).path == tmp_path / "rsr-2"
    assert rsr_checkpoint(tmp_path, 1) == tmp_path / "rsr-1" / "checkpoint"
    assert rpr_dir(tmp_path, 2, "rpr-2-fdr").path == tmp_path / "rpr-2-fdr"
    assert rpr_actor(tmp_path, 1) == tmp_path / "rpr-1" / "actor"
    # the paper's critic inheritance: RPR-2 starts from RPR-1's critic, RPR-1 from a fresh one
    assert inherited_critic(tmp_path, 2) == str(tmp_path / "rpr-1" / "critic") and inherited_critic(tmp_path, 1) == ""
    assert seed_dir(tmp_path, [0], 0) == tmp_path and seed_dir(tmp_path, [0, 1], 1) == tmp_path / "seed-1"


def test_the_steps_and_probes_trajectory_files_are_listed_oldest_first(tmp_path):
    d = StageDir(tmp_path)
    for name in ("step-010", "step-002", "probe-000"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "trajectories.jsonl").write_text("")
    (tmp_path / "step-011").mkdir()  # no episodes kept yet
    assert [p.parent.name for p in d.trajectory_files()] == ["step-002", "step-010"]
    assert [p.parent.name for p in d.trajectory_files("probe")] == ["probe-000"]
