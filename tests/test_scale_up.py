"""scale_up: FSDP2 over two CPU processes gives the one-process losses of the kit's own SFT step and PPO
update; the 27B dry-run plan fits its GPUs.  Run: pytest tests/test_scale_up.py
"""

import json
import os
import subprocess
import sys

import pytest

from .conftest import REPO


def _run(cmd, out):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    r = subprocess.run(cmd + ["--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(out.read_text())


def test_fsdp2_two_processes_match_one_process(tmp_path):
    single = _run([sys.executable, "-m", "scale_up.fsdp_check"], tmp_path / "single.json")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    sharded = _run(torchrun + ["-m", "scale_up.fsdp_check"], tmp_path / "sharded.json")
    assert (single["world"], sharded["world"]) == (1, 2)
    assert sharded["sft"] == pytest.approx(single["sft"], rel=1e-4, abs=1e-5)
    assert single["sft"][-1] < single["sft"][0]  # it trains
    for a, b in zip(sharded["ppo"], single["ppo"]):
        assert a == pytest.approx(b, rel=1e-4, abs=1e-5)


def test_dry_run_plan_for_27b_on_32_gpus():
    r = subprocess.run([sys.executable, "-m", "scale_up.plan", "--config", "scale_up/configs/qwen27b_32xh100.json"],
                       cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert "per GPU" in r.stdout and "fits" in r.stdout
    doc = json.loads(r.stdout.split("JSON:", 1)[1])
    for role in ("actor", "critic"):
        m = doc["memory_gb"][role]
        assert set(m) >= {"parameters", "gradients", "optimizer", "activations", "total"}
    assert doc["fits"] and doc["tokens_per_step"] > 0
