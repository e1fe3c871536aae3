"""Shared fixtures. Run everything with `make test` (or `pytest tests notebooks --nbmake`)."""

import json
import os
import textwrap
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
TASKS = REPO / "tasks_mini"


@pytest.fixture(scope="session")
def bwrap_ok():
    from rsi_lite.sandbox import bwrap_available

    why = bwrap_available()
    if why:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    return True


def write_harbor_task(root: Path, *, dockerfile: str, files: dict[str, str], test_py: str, solve: str,
                      instruction: str = "Do the thing.") -> Path:
    """A minimal Harbor task written the way someone else might write one (no rsi-lite helpers)."""
    root.mkdir(parents=True)
    (root / "instruction.md").write_text(instruction + "\n")
    (root / "task.toml").write_text('version = "1.0"\n\n[metadata]\ndifficulty = "easy"\ncategory = "demo"\n\n[verifier]\ntimeout_sec = 60.0\n')
    env = root / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text(textwrap.dedent(dockerfile))
    for rel, text in files.items():
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_text(text)
    tests = root / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n")
    (tests / "test_outputs.py").write_text(textwrap.dedent(test_py))
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text("#!/bin/bash\n" + solve + "\n")
    return root


@pytest.fixture(scope="session")
def small_random_model(tmp_path_factory):
    """A two-layer Llama with random weights and the bundled tokenizer, as a local model directory: the
    stages' real code runs on it in seconds. (What they learn is measured on the real model, elsewhere.)"""
    from rsi_lite.policy.model import random_model

    return random_model(tmp_path_factory.mktemp("model") / "random")


def scripted_trajectory(tok, messages, harness="exemplar", task="core-011-data_csv-easy", family="data_csv"):
    """A record as the engine writes it: actions are the ids 'generated' (here: encoded, plus the stop token).
    `messages` are rsi_lite Message objects; the task is named under tasks_mini/core."""
    from rsi_lite.rollout.trajectory import TokenStream, Trajectory, stop_token_ids

    stop = stop_token_ids(tok)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    first = next(i for i, m in enumerate(messages) if m.kind == "action")
    stream = TokenStream(tok, "a helper harness's system prompt", messages[:first])
    for m in messages[first:]:
        if m.kind == "action":
            ids = tok.encode(m.content, add_special_tokens=False) + [im_end]
            stream.add_action(ids, [-0.5] * len(ids), stop)
        else:
            stream.add_messages([m])
    ids, mask, spans, pos = [], [], [], 0
    for s in stream.segments:
        if s.kind == "action":
            spans.append([pos, pos + len(s.ids)])
        ids += s.ids
        mask += s.mask
        pos += len(s.ids)
    return Trajectory(task=task, task_path=str(TASKS / "core" / task), suite="core", family=family,
                      difficulty="easy", harness=harness, action_format="bash", policy="base", seed=0,
                      system="x", messages=[m.to_dict() for m in messages], token_ids=ids, action_mask=mask,
                      logprobs=[0.0] * len(ids), turn_spans=spans, finish_reason="complete", turns=len(spans),
                      verifier={"strict": 1, "passed": 4, "total": 4, "tests": []}, rewards={}, tokens={},
                      timings={})


# ---------------------------------------------------------------- the loop's stages, recorded

def _doc(checkpoint: str, val: float, suites=("core", "hard", "multi", "extreme", "swr", "lhtb", "val")) -> dict:
    return {"checkpoint": checkpoint, "k": 1, "suites": {
        s: {"success": val if s == "val" else 0.5, "k": 1, "n_tasks": 2, "strict": 1, "episodes": 2,
            "process_reward": 0.4, "runs": [0.5]} for s in suites}}


@pytest.fixture
def fake_stages(monkeypatch):
    """Stage functions that record their configs and write the files the real ones write (the loop's and the
    report's tests); yields (calls, val_of: checkpoint substring -> the val success its evaluation reads)."""
    from rsi_lite.loop import phases as loop

    calls = []
    val_of = {}  # checkpoint substring -> val success

    def fake_rsr(run, cycle, cfg, progress=False):
        d = Path(run) / f"rsr-{cycle}"
        if (d / "DONE").is_file():  # the stages' own contract: a finished stage is not run again
            return
        (d / "checkpoint").mkdir(parents=True, exist_ok=True)
        (d / "funnel.json").write_text(json.dumps({"discovery_successes": cycle, "examples": 3}))
        (d / "dataset.jsonl").write_text(json.dumps({"input_ids": [1, 2], "loss_mask": [0, 1], "kind": "k"}) + "\n")
        (d / "config.json").write_text(json.dumps(cfg.to_dict()))
        (d / "DONE").write_text("")
        calls.append(("rsr", cycle, cfg.init, None, cfg))

    def fake_rpr(run, cycle, cfg, progress=False, name=None):
        d = Path(run) / name
        if (d / "DONE").is_file():
            return
        for part in ("actor", "critic"):
            (d / part).mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(cfg.to_dict()))
        (d / "metrics.jsonl").write_text(json.dumps({"phase": "joint", "losses/explained_variance_before": 0.1,
                                                     "reward/mean": 0.3, "success/mean": 0.0}) + "\n")
        (d / "DONE").write_text("")
        calls.append(("rpr", name, cfg.init, cfg.critic_from, cfg))

    def fake_eval(d, checkpoint, cfg, model, progress=False):
        if (d / "DONE").is_file():
            return
        d.mkdir(parents=True, exist_ok=True)
        v = next((x for key, x in val_of.items() if key in checkpoint), 0.0)
        (d / "results.json").write_text(json.dumps(_doc(checkpoint, v)))
        (d / "trajectories.jsonl").write_text("")  # the file a real evaluation writes; no episodes in it
        (d / "DONE").write_text("")
        calls.append(("eval", d.name, checkpoint, None, None))

    monkeypatch.setattr(loop, "run_rsr", fake_rsr)
    monkeypatch.setattr(loop, "run_rpr", fake_rpr)
    monkeypatch.setattr(loop, "run_eval", fake_eval)
    def fake_floor(d, cfg):  # what `evaluate.floor` writes: lhtb keeps 1 of 11 checks untouched
        if not (d / "DONE").is_file():
            d.mkdir(parents=True, exist_ok=True)
            suites = {s: {"n_tasks": 1, "strict": 0, "success": 0.0, "process_reward": 0.0} for s in cfg.suites}
            suites["lhtb"]["process_reward"] = 1 / 11
            (d / "floor.json").write_text(json.dumps({"suites": suites}))
            (d / "DONE").write_text("")
            calls.append(("floor", d.name, None, None, None))

    monkeypatch.setattr(loop, "run_floor", fake_floor)
    monkeypatch.setattr("rsi_lite.tasks.suites.write_pool", lambda dest, n: Path(dest).mkdir(parents=True))
    return calls, val_of
