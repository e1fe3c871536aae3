"""The command line.  Run: pytest tests/cli/test_main.py"""

import json

import pytest

from rsi_lite.cli.main import main


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


def test_rpr_takes_the_config_with_the_seed_and_reward_given(tmp_path, monkeypatch):
    import rsi_lite.rpr.stage as rpr

    seen = {}
    monkeypatch.setattr(rpr, "run_rpr", lambda run, cycle, cfg, progress, name: seen.update(cfg=cfg, name=name) or {})
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"steps": 3, "seed": 0, "reward": "spr"}))
    assert main(["rpr", "--run", str(tmp_path / "r"), "--config", str(config), "--seed", "1", "--reward", "fdr"]) == 0
    assert (seen["cfg"].seed, seen["cfg"].reward, seen["cfg"].steps, seen["name"]) == (1, "fdr", 3, "rpr-1")
    assert main(["rpr", "--run", str(tmp_path / "r"), "--config", str(config)]) == 0
    assert (seen["cfg"].seed, seen["cfg"].reward) == (0, "spr")


def test_eval_accepts_engine_continuous_and_refuses_the_retired_lockstep(capsys):
    """docs/experiments.md's eval commands pass `--engine continuous`; the lockstep engine is gone."""
    from rsi_lite.cli.main import build_parser

    args = ["eval", "--suite", "core", "--out", "runs/x", "--engine"]
    assert build_parser().parse_args([*args, "continuous"]).engine == "continuous"
    with pytest.raises(SystemExit):
        build_parser().parse_args([*args, "lockstep"])
    assert "invalid choice: 'lockstep'" in capsys.readouterr().err


def test_run_turns_sigterm_into_an_unwinding_exit(tmp_path, monkeypatch):
    """`rsi-lite run` killed with SIGTERM raises SystemExit inside the loop, so the stage in flight records its
    attempt and closes its sandboxes (`Loop._timed`; tests/loop/test_phases) instead of vanishing."""
    import os
    import signal
    import time

    import rsi_lite.loop.phases as phases

    unwound = []

    def killed(*a, **k):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
        finally:
            unwound.append(True)

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(phases, "start", killed)
    try:
        with pytest.raises(SystemExit) as e:
            main(["run", "--profile", "smoke", "--out", str(tmp_path / "r")])
    finally:
        signal.signal(signal.SIGTERM, before)
    assert e.value.code == 128 + signal.SIGTERM and unwound == [True]
