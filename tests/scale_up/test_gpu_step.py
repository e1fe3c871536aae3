"""The GPU check (`scale_up.gpu_step`: one critic-only and two joint PPO updates of the kit's at the target width)
runs end to end here at a tiny width on the CPU, so the first GPU machine runs code that has run.

Run (verl's environment):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_gpu_step.py
"""

import math

import pytest

pytest.importorskip("verl")


def test_the_gpu_step_runs_at_a_tiny_width_on_the_cpu(capsys):
    from scale_up.gpu_step import main

    out = main(["--layers", "2", "--hidden", "64", "--intermediate", "128", "--heads", "4", "--kv-heads", "2",
                "--vocab", "256", "--episodes", "2", "--tokens", "256", "--device", "cpu"])
    assert out["device"] == "cpu" and len(out["update_s"]) == 3 and out["tokens_per_s_joint"] > 0
    assert math.isfinite(out["loss_policy"]) and math.isfinite(out["explained_variance"])
    assert '"tokens_per_s_joint"' in capsys.readouterr().out
