"""Shared fixtures. Run everything with `make test` (or `pytest tests notebooks --nbmake`)."""

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
    from rsi_lite.trajectory import TokenStream, Trajectory, stop_token_ids

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
