"""CTRF parsing and the verdict rules.  Run: pytest tests/verify/test_verifier.py

The two CTRF files in tests/data were written by the real plugins: 0.6.1 (this
environment, bubblewrap) and 0.3.5 (the Docker base image, as Harbor pins it).
"""

import json
from pathlib import Path

import pytest

from rsi_lite.verify.verifier import CTRFError, build_report, parse_ctrf, parse_reward

DATA = Path(__file__).parent.parent / "data"


@pytest.mark.parametrize("name", ["ctrf-0.3.5.json", "ctrf-0.6.1.json"])
def test_both_report_shapes_parse_the_same(name):
    tests, summary = parse_ctrf((DATA / name).read_bytes())
    assert [t["status"] for t in tests].count("passed") == 2 and len(tests) == 4
    assert summary["failed"] == 2


def test_shapes_really_differ():
    old = json.loads((DATA / "ctrf-0.3.5.json").read_text())
    new = json.loads((DATA / "ctrf-0.6.1.json").read_text())
    assert "reportFormat" not in old and new["reportFormat"] == "CTRF"
    assert isinstance(old["results"]["tests"][0]["duration"], float)
    assert isinstance(new["results"]["tests"][0]["duration"], int)
    assert "raw_status" in old["results"]["tests"][0] and "rawStatus" in new["results"]["tests"][0]


def _ctrf(statuses, **summary_over):
    tests = [{"name": f"t{i}", "status": s} for i, s in enumerate(statuses)]
    summary = {"tests": len(tests), **{s: statuses.count(s) for s in ("passed", "failed", "skipped", "pending", "other")}}
    summary.update(summary_over)
    return json.dumps({"results": {"tool": {"name": "pytest"}, "summary": summary, "tests": tests}}).encode()


def test_all_passed_is_strict_success():
    r = build_report(_ctrf(["passed"] * 3), b"1\n")
    assert (r.strict, r.passed, r.total, r.valid) == (1, 3, 3, True)


def test_partial_progress_is_measured():
    r = build_report(_ctrf(["passed", "failed", "passed"]), b"0")
    assert (r.strict, r.passed, r.failed, r.valid) == (0, 2, 1, True)


def test_empty_test_set_is_not_a_success():
    r = build_report(_ctrf([]), b"1")
    assert r.strict == 0 and not r.valid and "empty" in r.reason


def test_reward_that_disagrees_with_the_report_is_not_a_success():
    r = build_report(_ctrf(["passed", "failed"]), b"1")
    assert r.strict == 0 and not r.valid
    r = build_report(_ctrf(["passed", "passed"]), b"0")
    assert r.strict == 0 and not r.valid


@pytest.mark.parametrize("bad, field", [
    (b"{not json", "not JSON"),
    (b'{"tests": []}', "results"),
    (json.dumps({"results": {"summary": {"tests": 0}}}).encode(), "results.tests"),
    (_ctrf(["passed"], tests=2), "summary.tests"),
    (_ctrf(["passed", "failed"], passed=2), "summary.passed"),
    (json.dumps({"reportFormat": "JUnit", "results": {}}).encode(), "reportFormat"),
    (json.dumps({"results": {"summary": {"tests": 1}, "tests": [{"name": "a", "status": "won"}]}}).encode(), "status"),
])
def test_inconsistent_or_unreadable_report_is_invalid_and_names_the_field(bad, field):
    with pytest.raises(CTRFError, match=field.replace(".", r"\.")):
        parse_ctrf(bad)
    r = build_report(bad, b"1")
    assert r.strict == 0 and not r.valid and "invalid CTRF" in r.reason


def test_missing_reward_file_is_not_a_success():
    r = build_report(_ctrf(["passed"]), None)
    assert r.strict == 0


def test_reward_file_alone_gives_s_without_p():
    r = build_report(None, b"1")
    assert r.strict == 1 and not r.valid
    assert build_report(None, b"0.0").strict == 0


def test_reward_json_is_read_first():
    assert parse_reward(b"0", b'{"reward": 1}') == 1.0
    assert parse_reward(b"1", b'{"correctness": 1, "performance": 0}') == 0.5
    assert parse_reward(b"nan", None) is None
    assert parse_reward(None, b"[1]") is None


def test_skipped_tests_do_not_count_as_passed():
    r = build_report(_ctrf(["passed", "skipped"]), b"1")
    assert r.strict == 1 and r.passed == 1 and r.skipped == 1


def test_a_workspaces_fingerprint_is_its_paths_modes_bytes_and_links_not_its_times(tmp_path):
    """What `verify_sandbox`'s memo keys verdicts by: reading a file or touching it keeps the fingerprint;
    changing a byte, a permission bit, a name or a link's target changes it."""
    import os

    from rsi_lite.verify.verifier import tree_fingerprint

    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("alpha\n")
    (ws / "sub" / "run.sh").write_text("echo hi\n")
    os.symlink("a.txt", ws / "link")
    fp = tree_fingerprint(ws)
    (ws / "a.txt").read_text()
    os.utime(ws / "a.txt", (0, 0))
    assert tree_fingerprint(ws) == fp
    for change, undo in [
        (lambda: (ws / "a.txt").write_text("alphA\n"), lambda: (ws / "a.txt").write_text("alpha\n")),
        (lambda: os.chmod(ws / "sub" / "run.sh", 0o755), lambda: os.chmod(ws / "sub" / "run.sh", 0o644)),
        (lambda: (ws / "a.txt").rename(ws / "b.txt"), lambda: (ws / "b.txt").rename(ws / "a.txt")),
        (lambda: (os.unlink(ws / "link"), os.symlink("sub", ws / "link")),
         lambda: (os.unlink(ws / "link"), os.symlink("a.txt", ws / "link"))),
        (lambda: (ws / "sub" / "empty").mkdir(), lambda: (ws / "sub" / "empty").rmdir()),
    ]:
        change()
        assert tree_fingerprint(ws) != fp
        undo()
        assert tree_fingerprint(ws) == fp
