"""What a run records about its stages' cost and how it stops (`rsi_lite.loop.cost`, `rundir.stop_if_asked`), on the
loop with recorded stages (`fake_stages`): a paused stage's CPU share, an interrupted stage's attempts, a STOP file.
Run: pytest tests/loop/test_cost.py
"""

from __future__ import annotations

import json

import pytest

from rsi_lite.loop.phases import start
from rsi_lite.report.write import write_report


def test_a_paused_stages_cpu_share_is_its_own_process_not_the_machines(tmp_path, fake_stages, monkeypatch):
    """While a run stands stopped (`kill -STOP`) something else may use the machine; the machine's busy seconds
    then hold it, so a stage that was paused gets its share from its own process and children."""
    clock = {"n": 0}

    class Pauses:  # every stage stood stopped for a millisecond
        def start(self):
            return self

        def total(self):
            clock["n"] += 1
            return 0.0 if clock["n"] % 2 else 0.001

    def cpu_seconds():
        clock["c"] = clock.get("c", 0) + 1
        return {"process": clock["c"] * 1.0, "children": 0.0, "machine": clock["c"] * 100.0}

    from rsi_lite import timing
    from rsi_lite.loop import cost

    ticks = iter(range(10**6))
    monkeypatch.setattr(timing, "PAUSES", Pauses())
    monkeypatch.setattr(cost, "cpu_seconds", cpu_seconds)
    monkeypatch.setattr(timing, "_now", lambda: 10.0 * next(ticks))  # each reading 10 s after the last
    start(tmp_path / "r", "tiny", cycles=1, log=lambda *_: None)
    row = json.loads((tmp_path / "r" / "cost.json").read_text())["RSR-1"]
    assert row["wall_s"] == 10.0 and row["cpu_s"] == {"process": 1.0, "children": 0.0, "machine": 100.0}
    assert row["cpu_share"] == 0.1  # its own second over its 10 s, not the machine's 100


def test_an_interrupted_stage_records_its_attempt_and_the_finished_wall_adds_the_attempts(tmp_path, fake_stages,
                                                                                            monkeypatch):
    """Killed during RSR-1 (Ctrl-C; `rsi-lite run` turns SIGTERM into the same unwinding), the attempt's wall is in
    cost.json before the run stops; the resumed attempt that finishes the stage makes `wall_s` the sum."""
    import time

    from rsi_lite.loop import phases

    real = phases.run_rsr
    state = {"killed": False}

    def killed_once(run, cycle, cfg, progress=False):
        if not state["killed"]:
            state["killed"] = True
            time.sleep(0.3)
            raise KeyboardInterrupt
        time.sleep(0.1)
        return real(run, cycle, cfg, progress)

    monkeypatch.setattr(phases, "run_rsr", killed_once)
    with pytest.raises(KeyboardInterrupt):
        start(tmp_path / "r", "tiny", cycles=1, log=lambda *_: None)
    cost = json.loads((tmp_path / "r" / "cost.json").read_text())
    assert cost["RSR-1"]["wall_s"] is None and len(cost["RSR-1"]["attempts_s"]) == 1
    assert cost["RSR-1"]["attempts_s"][0] >= 0.3
    write_report(tmp_path / "r")  # a report of the stopped run reads the interrupted row
    start(tmp_path / "r", "tiny", resume=True, cycles=1, log=lambda *_: None)
    row = json.loads((tmp_path / "r" / "cost.json").read_text())["RSR-1"]
    first, second = row["attempts_s"]
    assert first >= 0.3 and second >= 0.1 and row["wall_s"] == pytest.approx(first + second, abs=0.11)
    write_report(tmp_path / "r")


def test_a_stop_file_ends_the_run_at_the_next_stage_boundary_and_the_same_command_resumes(tmp_path, fake_stages,
                                                                                            monkeypatch):
    """`touch RUN/STOP` during RSR-1: RSR-1 finishes, the run exits 0 before RSR-1's evaluation starts (nothing of it
    written, no interrupted attempt in cost.json), the file is gone, and `--resume` goes on from there."""
    from rsi_lite.loop import phases

    real, run = phases.run_rsr, tmp_path / "r"

    def asked_during(r, cycle, cfg, progress=False):
        (run / "STOP").touch()
        return real(r, cycle, cfg, progress)

    monkeypatch.setattr(phases, "run_rsr", asked_during)
    with pytest.raises(SystemExit) as stopped:
        start(run, "tiny", cycles=1, log=lambda *_: None)
    assert stopped.value.code == 0 and not (run / "STOP").exists()
    assert (run / "rsr-1" / "DONE").is_file() and not (run / "eval-rsr-1").exists()
    cost = json.loads((run / "cost.json").read_text())
    assert cost["RSR-1"]["wall_s"] is not None and "eval RSR-1" not in cost
    monkeypatch.setattr(phases, "run_rsr", real)
    start(run, "tiny", resume=True, cycles=1, log=lambda *_: None)
    assert (run / "DONE").is_file() and "attempts_s" not in json.loads((run / "cost.json").read_text())["RSR-1"]
