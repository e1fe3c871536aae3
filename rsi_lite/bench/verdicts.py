"""Verifier runs per-turn verification makes, without and with an episode's verdict memo:
`python -m rsi_lite.bench.verdicts RUN/rpr-1 [--episodes N]`.

Replays an RPR stage's recorded training episodes (their replies, through the plain harness, in real
sandboxes, `verify_turns` on) and counts the verdicts asked for after actions that ran a command, and how many
of them the memo gives back (the workspace equals one the episode already verified; `verify.verify_sandbox`).
The tests themselves are not run here, only counted: multiply the runs saved by the verifier's time per task
(`python -m rsi_lite.bench.sandbox`) for the busy seconds saved. A benchmark, not a test: run it by hand and
quote its output.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from unittest import mock

from ..rundir import StageDir


def main(argv: list[str] | None = None) -> None:
    from transformers import AutoTokenizer

    from ..harness.messages import Message
    from ..policy.model import prepare_model
    from ..rollout.engine import RolloutConfig, _act, _open_episode
    from ..sandbox import SandboxLimits
    from ..tasks.task import load_task
    from ..verify import verifier as verify

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("stage", type=Path, help="an RPR stage directory (its step-*/trajectories.jsonl)")
    ap.add_argument("--episodes", type=int, default=None, help="the first N episodes (default: all)")
    a = ap.parse_args(argv)
    files = StageDir(a.stage).trajectory_files()
    if not files:
        raise SystemExit(f"{a.stage}: no step-*/trajectories.jsonl (not an RPR stage directory?)")
    episodes = [json.loads(line) for f in files for line in f.open()][: a.episodes]

    runs = []

    def counted(task, ws, **kw):  # every verifier run the replay asks for, answered without running the tests
        runs.append(task.name)
        return verify.VerifierReport(strict=0, passed=0, failed=0, total=1, valid=True)

    tok = AutoTokenizer.from_pretrained(prepare_model())
    cfg, limits = RolloutConfig(max_turns=99, verify_turns=True), SandboxLimits(command_timeout=10)
    asked = given_back = turns = 0
    with mock.patch.object(verify, "run_verifier", counted):
        for r in episodes:
            e = _open_episode((load_task(r["task_path"]), r["seed"]), cfg, tok, limits)
            try:
                for m in (m for m in r["messages"] if m["role"] == "assistant"):
                    ids = tok.encode(m["content"])
                    e.messages.append(Message("action", e.stream.add_action(ids, [0.0] * len(ids),
                                                                            {tok.eos_token_id})))
                    ran = e.state.commands_run
                    new = _act(e, limits)
                    turns += 1
                    asked += e.state.commands_run > ran
                    e.stream.add_messages(new)
                    e.messages += new
                    if e.state.done:
                        break
                given_back += e.verdicts.get("hits", 0)
            finally:
                e.sandbox.close()
    print(json.dumps({"stage": str(a.stage), "episodes": len(episodes), "turns": turns, "verdicts_asked": asked,
                      "verifier_runs_with_memo": len(runs), "given_back": given_back,
                      "saved": round(given_back / asked, 3) if asked else None}))


if __name__ == "__main__":
    main()
