"""`rsi_lite.bench.credit`: the three baselines' whitened advantages per kind and outcome, on a batch built by hand.
Run: pytest tests/bench/test_credit.py
"""

import torch

from rsi_lite.bench.credit import credit_rows, table
from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.targets import batch_tensors

from ..rpr.test_stage import fake_trajectories


def test_a_noisy_critic_pushes_down_tokens_of_successes_where_turn_values_and_a_constant_do_not():
    trajs = fake_trajectories(6)  # even rows succeed (reward 1), odd rows fail (0.25); two turns each
    _, _, mask, _, rewards = batch_tensors(trajs, "spr", 0)
    # a critic whose values jump up and down inside each turn, around the batch's mean reward
    noise = torch.tensor([0.4 if t % 2 else -0.4 for t in range(mask.shape[1])])
    values = (rewards.sum(1, keepdim=True).mean() + noise).expand_as(mask).clone()
    rows = credit_rows(trajs, values, rewards, mask, {t.task: "kind A" for t in trajs}, RPRConfig())
    neg = {b: sum(x[1] for x in rows[(b, "kind A", 1)]) / 3 for b in ("critic", "turn", "const")}
    assert neg["critic"] > 0.2, neg                  # some of a success's tokens go negative
    assert neg["turn"] == 0.0 and neg["const"] == 0.0, neg
    assert all(x[0] < 0 for b in ("turn", "const") for x in rows[(b, "kind A", 0)])  # failures stay negative
    text = table(rows)
    assert text.splitlines()[0].split()[:3] == ["kind", "S", "n"] and "kind A" in text


def test_by_turn_the_done_marker_is_pushed_up_in_successes_and_down_in_failures():
    """`--by turn`: every episode ends with TASK COMPLETE after one command; the critic knows the batch's mean
    reward and nothing else (turn values). The done marker's tokens get a positive advantage in the successes and a
    negative one in the failures, so the update moves them by the difference; the table counts both."""
    from dataclasses import replace

    from rsi_lite.bench.credit import turn_credit_rows, turn_table

    trajs = [replace(t, messages=[{"role": "assistant", "kind": "action", "content": "```bash\nls\n```"},
                                  {"role": "user", "kind": "observation", "content": ""},
                                  {"role": "assistant", "kind": "action", "content": "TASK COMPLETE"}])
             for t in fake_trajectories(6)]
    _, _, mask, _, rewards = batch_tensors(trajs, "spr", 0)
    values = torch.full(mask.shape, float(rewards.sum(1).mean()))
    rows = turn_credit_rows(trajs, values, rewards, mask, RPRConfig(value_at="turn"))
    assert set(rows) == {(1, 1, "command"), (1, 0, "command"), (2, 1, "done"), (2, 0, "done")}
    assert all(w > 0 for w, _ in rows[(2, 1, "done")]) and all(w < 0 for w, _ in rows[(2, 0, "done")])
    text = turn_table(rows)
    assert "   2 0 done        3" in text and text.splitlines()[-1].endswith("0/3")


def test_by_turn_a_critic_free_stage_reads_its_group_advantages():
    """A grpo stage has no critic: `--by turn` gives each reply its episode's group advantage, unwhitened, as the
    update does; two episodes of one task, one solved, one not, ending with the same done marker."""
    from dataclasses import replace

    from rsi_lite.bench.credit import turn_credit_rows

    trajs = [replace(t, task="t0", messages=[{"role": "assistant", "kind": "action", "content": "TASK COMPLETE"}])
             for t in fake_trajectories(2)]
    _, _, mask, _, rewards = batch_tensors(trajs, "spr", 0)
    rows = turn_credit_rows(trajs, None, rewards, mask, RPRConfig(estimator="grpo", rollouts_per_task=2,
                                                                   warmup_tasks=0, calibration_steps=0))
    (up,), (down,) = rows[(1, 1, "done")], rows[(1, 0, "done")]
    assert up[0] == up[1] > 0 > down[0] == down[1]
    assert abs(up[0] + down[0]) < 1e-5  # one success, one failure: the same push, opposite signs


def test_the_command_refuses_kind_credit_for_a_critic_free_stage(tmp_path):
    import json

    import pytest

    from rsi_lite.bench.credit import main

    cfg = RPRConfig(estimator="grpo", rollouts_per_task=2, warmup_tasks=0, calibration_steps=0)
    (tmp_path / "config.json").write_text(json.dumps(cfg.to_dict()))
    with pytest.raises(SystemExit, match="config.json: estimator 'grpo' has no critic"):
        main(["--run", str(tmp_path), "--pool", str(tmp_path), "--by", "kind"])
