"""The critic and the RPR stage: the stage's batch figures, the critic saved and loaded, the config's checks,
the optimizer states, the schedule, and the stage end to end on the bundled model (resumable). One update's
own tests: tests/rpr/test_update.py.  Run: pytest tests/rpr/test_stage.py
"""

import json
import shutil

import pytest
import torch

from rsi_lite.policy.critic import add_critic, save_critic, token_logprobs, values
from rsi_lite.policy.model import Policy, PolicyConfig
from rsi_lite.rollout.trajectory import Trajectory, read_trajectories
from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.stage import init_value_bias, make_optimizers, run_rpr, schedule
from rsi_lite.rpr.targets import batch_tensors
from rsi_lite.rpr.update import update

from ..conftest import TASKS


def tiny_actor_critic(tok, seed=0):
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2)
    pcfg = PolicyConfig(quantization="lora", lora_r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    model = get_peft_model(LlamaForCausalLM(cfg), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                              task_type="CAUSAL_LM"), adapter_name="actor")
    return add_critic(Policy(model, tok, pcfg, ["actor"]))


def fake_trajectories(n=4, length=40, seed=0):
    """Random ids with two action turns each; reward 1 for even rows (what the critic should learn to tell)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        ids = torch.randint(5, 1000, (length,), generator=g).tolist()
        mask = [0] * 10 + [1] * 8 + [0] * 12 + [1] * 10
        out.append(Trajectory(task=f"t{i}", task_path="", suite="pool", family="f", difficulty="easy",
                              harness="plain", action_format="bash", policy="x", seed=0, system="", messages=[],
                              token_ids=ids, action_mask=mask, logprobs=[-1.0 if m else 0.0 for m in mask],
                              turn_spans=[[10, 18], [30, 40]], finish_reason="complete", turns=2,
                              verifier={"strict": int(i % 2 == 0), "passed": 1, "total": 2},
                              rewards={"s": float(i % 2 == 0), "fdr": 0.5, "spr": float(i % 2 == 0) or 0.25},
                              tokens={"generated": 18}, timings={}))
    return out


def _snapshot(policy):
    return {n: p.detach().clone() for n, p in policy.model.named_parameters()} | \
        {f"head.{n}": p.detach().clone() for n, p in policy.value_head.named_parameters()}


def _changed(policy, before):
    now = _snapshot(policy)
    return {n for n in now if not torch.equal(now[n], before[n])}


def test_the_batch_figures_are_the_stages_and_cover_the_whole_batch(tok, tmp_path):
    """`reward/mean`, `success/mean` and `tokens/generated` have one owner, `update_step`, which reads the whole
    batch from the step's files; `update` (the losses) does not report them."""
    from rsi_lite.rollout.trajectory import write_trajectories
    from rsi_lite.rpr.stage import update_step

    trajs = fake_trajectories(4)
    trajs[1].tokens = {"generated": 30}
    cfg = RPRConfig(minibatch=2, warmup_tasks=0, calibration_steps=1, steps=0, critic_lr=1e-2)
    pol = tiny_actor_critic(tok)
    assert not {"reward/mean", "success/mean", "tokens/generated"} & set(
        update(pol, trajs, cfg, make_optimizers(pol, cfg), train_actor=False))
    step = tmp_path / "step-000"
    step.mkdir()
    write_trajectories(trajs, step / "rollouts.jsonl")
    (step / "rollout.json").write_text(json.dumps({"rollout_s": 1.0, "phase": "calibration", "batch": {}}))
    row = update_step(pol, make_optimizers(pol, cfg), cfg, tmp_path, 0)
    assert row["reward/mean"] == pytest.approx(sum(t.rewards["spr"] for t in trajs) / 4)
    assert row["success/mean"] == 0.5 and row["tokens/generated"] == 18 * 3 + 30


def test_critic_saves_and_loads_on_its_own(tok, tmp_path):
    pol = tiny_actor_critic(tok)
    opt = make_optimizers(pol, RPRConfig(critic_lr=1e-2))
    update(pol, fake_trajectories(), RPRConfig(minibatch=2), opt, train_actor=False)
    save_critic(pol, tmp_path / "critic")
    ids = torch.tensor([fake_trajectories(1)[0].token_ids])
    att = torch.ones_like(ids)
    with torch.no_grad():
        v1, lp1 = values(pol, ids, att), token_logprobs(pol, ids, att)
    # a second policy (same base and actor weights, other critic) takes the saved critic
    other = tiny_actor_critic(tok, seed=0)
    other.model.delete_adapter("critic")
    other.adapters.remove("critic")
    add_critic(other, path=tmp_path / "critic")
    with torch.no_grad():
        assert torch.allclose(values(other, ids, att), v1, atol=1e-5)
        assert torch.allclose(token_logprobs(other, ids, att), lp1, atol=1e-5)


def test_a_fresh_critic_starts_near_constant_at_the_batch_mean_and_a_loaded_one_is_kept(tok, tmp_path):
    pol = tiny_actor_critic(tok)
    trajs = fake_trajectories(8)
    ids, att, mask, _, _ = batch_tensors(trajs, "spr", 0)
    with torch.no_grad():
        v = values(pol, ids, att)[mask.bool()]
    assert v.std() < 0.01 and v.abs().max() < 0.05  # not the default head's token-to-token noise
    mean = sum(t.rewards["spr"] for t in trajs) / len(trajs)
    assert init_value_bias(pol, trajs, "spr") == pytest.approx(mean)
    with torch.no_grad():
        assert (values(pol, ids, att)[mask.bool()] - mean).abs().max() < 0.05
    assert init_value_bias(pol, trajs, "spr") is None  # once only
    save_critic(pol, tmp_path / "critic")
    other = tiny_actor_critic(tok)
    other.model.delete_adapter("critic")
    other.adapters.remove("critic")
    add_critic(other, path=tmp_path / "critic")  # inherited: its head is the saved one, left as it is
    assert init_value_bias(other, fake_trajectories(4, seed=1), "spr") is None
    assert other.value_head.bias.item() == pytest.approx(mean)

def test_the_config_refuses_a_reward_the_registry_lacks_and_names_the_field_and_the_choices():
    from rsi_lite.algos.rewards import REWARDS

    for kind in REWARDS:
        assert RPRConfig(reward=kind).reward == kind
    with pytest.raises(ValueError, match=r"RPRConfig.reward: 'SPR' is not one of s, fdr, spr"):
        RPRConfig.from_dict({"reward": "SPR"})


def test_optimizer_states_load_from_the_ranks_own_file_only(tmp_path):
    """A step's optimizer states are `optim-rank{R}.pt` beside its `world.json`; no other file name is read."""
    from rsi_lite.rpr.stage import load_optimizers

    def optims():
        torch.manual_seed(0)
        return {"critic": torch.optim.AdamW(torch.nn.Linear(2, 1).parameters(), lr=0.1)}

    saved = optims()
    saved["critic"].param_groups[0]["lr"] = 0.5
    (tmp_path / "world.json").write_text(json.dumps({"world": 1}))
    torch.save({name: o.state_dict() for name, o in saved.items()}, tmp_path / "optim.pt")
    with pytest.raises(FileNotFoundError):
        load_optimizers(optims(), tmp_path, 0, 1)
    (tmp_path / "optim.pt").rename(tmp_path / "optim-rank0.pt")
    loaded = optims()
    load_optimizers(loaded, tmp_path, 0, 1)
    assert loaded["critic"].param_groups[0]["lr"] == 0.5
    with pytest.raises(ValueError, match="written by 1 rank"):
        load_optimizers(optims(), tmp_path, 0, 2)


def test_schedule_is_warmup_then_calibration_then_joint():
    s = schedule(RPRConfig(warmup_tasks=5, batch_tasks=2, calibration_steps=4, steps=2))
    assert [p for p, _ in s] == ["warmup"] * 3 + ["calibration"] * 4 + ["joint"] * 2
    # an inherited critic (RPR-2's, the reward-FDR control's) is not warmed up again: calibration, then joint
    s = schedule(RPRConfig(warmup_tasks=5, batch_tasks=2, calibration_steps=4, steps=2, critic_from="rpr-1/critic"))
    assert [p for p, _ in s] == ["calibration"] * 4 + ["joint"] * 2


def test_a_stage_resumed_under_another_schedule_is_refused(tmp_path):
    """An RPR-2 stage that inherited its critic and was started while such a stage still had a warm-up: its
    step-000 is a warm-up step where the schedule now has calibration. Resuming it would count every later step
    as the next phase (one joint update fewer, probes moved): refused, naming the file, before any model loads."""
    pool = tmp_path / "pool"
    shutil.copytree(TASKS / "core" / "core-000-file_ops-easy", pool / "core-000-file_ops-easy")
    cfg = RPRConfig(pool=str(pool), warmup_tasks=2, batch_tasks=2, calibration_steps=1, steps=1,
                    critic_from=str(tmp_path / "rpr-1" / "critic"))
    d = tmp_path / "run" / "rpr-2"
    (d / "step-000").mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(cfg.to_dict()))
    (d / "step-000" / "metrics.json").write_text(json.dumps({"step": 0, "phase": "warmup"}))
    (d / "step-000" / "DONE").write_text("")
    with pytest.raises(ValueError, match=r"step-000/metrics.json: phase 'warmup', where this stage's schedule "
                                         r"has 'calibration'"):
        run_rpr(tmp_path / "run", 2)


def test_rpr_stage_end_to_end_and_resumable(tmp_path, bwrap_ok):
    pool = tmp_path / "pool"
    for name in ("core-000-file_ops-easy", "core-005-text_processing-easy"):
        shutil.copytree(TASKS / "core" / name, pool / name)
    cfg = RPRConfig(pool=str(pool), warmup_tasks=2, warmup_epochs=1, batch_tasks=2, minibatch=2,
                    calibration_steps=1, steps=1, probe_samples=1, probe_tasks=2, report_to="tensorboard",
                    reward_timing="turn")
    cfg.rollout.max_turns, cfg.rollout.max_new_tokens = 1, 24
    run = tmp_path / "run"
    summary = run_rpr(run, 1, cfg)
    d = run / "rpr-1"
    tags = tensorboard_scalars(d / "tensorboard")  # the curves, where TensorBoard looks
    assert [s for s, _ in tags["probe/pool_success"]] == [0, 3] and [s for s, _ in tags["ratio/min"]] == [2]
    assert [s for s, _ in tags["reward/mean"]] == [0, 1, 2]  # every step (a NaN, e.g. an EV of constant returns, is left out)
    # reward_timing 'turn': the steps' episodes carry a verdict per action, the probes' do not (they only count)
    step_trajs = read_trajectories(d / "step-002" / "trajectories.jsonl")
    assert all(len(t.turn_rewards["spr"]) == len(t.turn_spans) for t in step_trajs)
    assert not any(t.turn_rewards for t in read_trajectories(d / "probe-000" / "trajectories.jsonl"))
    assert summary["phases"] == {"warmup": 1, "calibration": 1, "joint": 1}
    assert (d / "actor" / "adapter_config.json").is_file() and (d / "critic" / "value_head.pt").is_file()
    rows = [json.loads(x) for x in (d / "metrics.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in rows] == ["warmup", "calibration", "joint"] and "losses/policy" in rows[-1]
    for key in ("batch/rule", "success/any", "success/batches_with_any", "ratio/min", "losses/approx_kl"):
        assert key in rows[-1]
    probes = [json.loads(x) for x in (d / "probes.jsonl").read_text().splitlines()]
    assert [p["before_step"] for p in probes] == [0, 3] and all(p["episodes"] == 2 for p in probes)
    assert summary["probes"]["before_step"] == [0, 3] and len(summary["probes"]["pool_success"]) == 2
    # as if killed during the joint step: it is redone from the calibration step's weights, nothing else
    stamp = (d / "step-000" / "metrics.json").stat().st_mtime_ns
    for name in ("DONE", "summary.json"):
        (d / name).unlink()
    shutil.rmtree(d / "step-002")
    again = run_rpr(run, 1)
    assert again["steps"] == 3 and (d / "step-000" / "metrics.json").stat().st_mtime_ns == stamp
    # killed after the joint step's rollouts, during its update (the files scale_up's generate job leaves):
    # the update runs on those rollouts, from the calibration step's weights and optimizer states
    for name in ("DONE", "summary.json"):
        (d / name).unlink()
    rolled = (d / "step-002" / "rollouts.jsonl").read_text()
    rolled_at = (d / "step-002" / "rollouts.jsonl").stat().st_mtime_ns
    for name in ("DONE", "metrics.json", "trajectories.jsonl", "world.json", "optim-rank0.pt"):
        (d / "step-002" / name).unlink()
    shutil.rmtree(d / "step-002" / "actor")
    assert (d / "step-001" / "optim-rank0.pt").is_file() and json.loads((d / "step-001" / "world.json").read_text()) == {"world": 1}
    again = run_rpr(run, 1)
    assert again["steps"] == 3 and (d / "step-002" / "trajectories.jsonl").read_text() == rolled
    assert (d / "step-002" / "rollouts.jsonl").stat().st_mtime_ns == rolled_at  # not rolled out again
    assert (d / "step-002" / "actor" / "adapter_config.json").is_file()


def tensorboard_scalars(log_dir) -> dict:
    """{tag: [(step, value), ...]} from the event files under `log_dir`."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
