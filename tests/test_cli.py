"""The command line.  Run: pytest tests/test_cli.py"""

import json

from rsi_lite.cli import main


def test_tasks_list(capsys):
    assert main(["tasks", "list", "--suite", "core"]) == 0
    out = capsys.readouterr().out
    assert "core-000" in out and "core=45" in out


def test_score_audit(capsys):
    assert main(["score-audit", "19.84", "--tasks", "63", "66"]) == 0
    assert capsys.readouterr().out.startswith("19.84 fits only 25/126")


def test_rewards_audit(tmp_path, capsys):
    path = tmp_path / "trajectories.jsonl"
    rows = [{"family": "f", "verifier": {"strict": 1, "passed": 3, "total": 3, "valid": True}},
            {"family": "f", "verifier": {"strict": 0, "passed": 100, "total": 120, "valid": True}}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["rewards", "audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "FDR" in out and "SPR" in out and "50.09%" in out


def test_rewards_audit_names_the_bad_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"verifier": {"strict": 1}}\n{"nope": 1}\n')
    try:
        main(["rewards", "audit", str(path)])
    except SystemExit as e:
        assert "t.jsonl:2" in str(e) and "verifier" in str(e)
    else:
        raise AssertionError("expected an error")
