"""One PPO update (`rsi_lite.rpr.update`): which weights move, the fixed metric names, the rollout correction, the
ratio bounds, memory-saving paths with the plain one's gradients, the critic learning values, the estimator
registry.  Run: pytest tests/rpr/test_update.py
"""

import contextlib
import zlib
from dataclasses import replace

import pytest
import torch

from rsi_lite.policy.critic import token_logprobs, values
from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.stage import make_optimizers
from rsi_lite.rpr.targets import batch_tensors, rollout_correction
from rsi_lite.rpr.update import update

from .test_stage import _changed, _snapshot, fake_trajectories, tiny_actor_critic


class _GradRecorder(torch.optim.SGD):
    """lr 0: records every step's gradients and leaves the weights alone."""

    def __init__(self, params):
        super().__init__(params, lr=0.0)
        self.seen = []

    def step(self, closure=None):
        self.seen.append([p.grad.clone() if p.grad is not None else None for g in self.param_groups for p in g["params"]])


def test_critic_only_update_leaves_the_actor_and_base_untouched(tok):
    pol = tiny_actor_critic(tok)
    cfg = RPRConfig(minibatch=2, critic_lr=1e-2)
    opt = make_optimizers(pol, cfg)
    before = _snapshot(pol)
    update(pol, fake_trajectories(), cfg, opt, train_actor=False)
    changed = _changed(pol, before)
    assert changed and all(".critic." in n or n.startswith("head.") for n in changed)


def test_joint_update_moves_both_and_reports_fixed_metric_names(tok):
    pol = tiny_actor_critic(tok)
    cfg = RPRConfig(minibatch=4, actor_lr=1e-2, critic_lr=1e-2)
    opt = make_optimizers(pol, cfg)
    before = _snapshot(pol)
    row = update(pol, fake_trajectories(), cfg, opt, train_actor=True)
    changed = _changed(pol, before)
    assert any(".actor." in n for n in changed) and any(".critic." in n for n in changed)
    assert not any("lora" not in n and not n.startswith("head.") for n in changed)  # the base stays frozen
    for k in ("losses/policy", "losses/value", "losses/clipfrac", "losses/approx_kl", "losses/explained_variance",
              "ratio/mean", "logprobs/rollout_gap"):
        assert k in row
    # one epoch, one minibatch: the old log-probs come from the same weights, so the first ratio is exactly 1
    assert row["ratio/mean"] == pytest.approx(1.0, abs=1e-5) and row["losses/clipfrac"] == 0.0
    # the rollout correction's statistics sit beside the gap; the default (transformers at temperature 1) is off
    assert row["tis/on"] == 0.0 and 0 < row["tis/weight_mean"] <= 2.0 and 0 <= row["tis/truncated_frac"] <= 1


def test_rollout_correction_auto_follows_the_engine_and_the_sampling_settings():
    trajs = fake_trajectories(2)
    auto = RPRConfig()
    assert not rollout_correction(auto, trajs)  # no sampler record: judged by cfg.rollout (transformers, T 1)

    def sampled(**s):
        return [replace(t, sampler={"backend": "transformers", "temperature": 1.0, "top_p": 1.0, **s}) for t in trajs]

    assert not rollout_correction(auto, sampled())
    assert not rollout_correction(auto, sampled(temperature=0.0))  # greedy: the plain softmax, pi_old's own
    assert rollout_correction(auto, sampled(temperature=0.6))
    assert rollout_correction(auto, sampled(top_p=0.9))
    assert rollout_correction(auto, sampled(backend="ctranslate2", compute_type="float32"))
    assert rollout_correction(auto, sampled(backend="vllm", temperature=0.0))
    assert rollout_correction(RPRConfig(rollout=replace(auto.rollout, temperature=0.6)), trajs)
    assert rollout_correction(RPRConfig(rollout_correction="on"), sampled())
    assert not rollout_correction(RPRConfig(rollout_correction="off"), sampled(backend="vllm"))
    with pytest.raises(ValueError, match="rollout_correction"):
        RPRConfig(rollout_correction="sometimes")


def test_the_rollout_correction_weighs_the_actor_loss_only_when_on(tok):
    """The fake rollouts recorded -1 on every action token, far from the random model's log-probabilities, so
    the weights are far from 1: on, the actor's step differs from the off one; the critic's is the same."""
    rows, params = {}, {}
    for mode in ("off", "on"):
        pol = tiny_actor_critic(tok)
        cfg = RPRConfig(minibatch=4, actor_lr=1e-2, critic_lr=1e-2, rollout_correction=mode)
        rows[mode] = update(pol, fake_trajectories(), cfg, make_optimizers(pol, cfg), train_actor=True)
        params[mode] = _snapshot(pol)
    assert rows["on"]["tis/on"] == 1.0 and rows["off"]["tis/on"] == 0.0
    assert rows["on"]["tis/weight_mean"] == rows["off"]["tis/weight_mean"] != 1.0
    assert rows["on"]["losses/policy"] != rows["off"]["losses/policy"]
    assert rows["on"]["losses/value"] == rows["off"]["losses/value"]
    actor = [n for n in params["on"] if ".actor." in n and "lora" in n]
    critic = [n for n in params["on"] if ".critic." in n or n.startswith("head.")]
    assert any(not torch.equal(params["on"][n], params["off"][n]) for n in actor)
    assert all(torch.equal(params["on"][n], params["off"][n]) for n in critic)


def test_ratio_bounds_are_over_every_minibatch_and_the_later_ones_see_the_actor_move(tok):
    pol = tiny_actor_critic(tok)
    cfg = RPRConfig(minibatch=1, actor_lr=5e-2, critic_lr=1e-2)
    row = update(pol, fake_trajectories(4), cfg, make_optimizers(pol, cfg), train_actor=True, epochs=2)
    assert row["ratio/min"] < 1.0 - 1e-4 or row["ratio/max"] > 1.0 + 1e-4
    assert row["ratio/min"] <= row["ratio/mean"] <= row["ratio/max"]


def test_the_memory_saving_update_has_the_gradients_of_the_plain_one(tok, monkeypatch):
    """`update` trims minibatches to their widest row, scores action tokens only, back-propagates the critic
    before the actor and checkpoints activations. Its first gradients must equal those of the textbook
    step: full-width rows, log-probabilities everywhere, one backward of the summed loss, no checkpointing.
    The adapters get random B matrices first: at init (B = 0) actor and critic compute the same function,
    which would hide a recomputation routed through the wrong adapter."""
    from rsi_lite.algos.ppo import masked_whiten, ppo_loss
    from rsi_lite.policy.critic import actor_parameters, critic_parameters, set_trainable
    from rsi_lite.rpr import targets
    from rsi_lite.rpr import update as rpr

    pol = tiny_actor_critic(tok)
    with torch.no_grad():
        for n, p in pol.model.named_parameters():
            if "lora_B" in n:
                p.normal_(std=0.2)
    trajs = fake_trajectories(4)
    for t, n in zip(trajs, (40, 24, 33, 19)):  # different lengths: the trimmed widths differ from the batch's
        t.token_ids, t.action_mask, t.logprobs = t.token_ids[:n], t.action_mask[:n], t.logprobs[:n]
    cfg = RPRConfig(minibatch=2, max_grad_norm=1e9)

    def grads(checkpoint: bool):
        if not checkpoint:
            monkeypatch.setattr(rpr, "checkpointing", lambda model: contextlib.nullcontext())
        opt = {"actor": _GradRecorder(actor_parameters(pol)), "critic": _GradRecorder(critic_parameters(pol))}
        update(pol, trajs, cfg, opt, train_actor=True)
        monkeypatch.undo()
        return opt["actor"].seen[0], opt["critic"].seen[0]

    new_actor, new_critic = grads(True)
    plain_actor, plain_critic = grads(False)

    # the textbook step on the first minibatch update() takes (step 0, epoch 0's shuffle of the length groups)
    ids, att, mask, _, rewards = batch_tensors(trajs, cfg.reward, tok.pad_token_id)
    with torch.no_grad():
        adv, ret = targets.advantages_for(cfg, rewards, values(pol, ids, att), mask)
        old_lp = token_logprobs(pol, ids, att)
    adv = masked_whiten(adv, mask)
    groups = targets.minibatches(trajs, cfg.minibatch)
    mb = torch.tensor(rpr.minibatch_order(groups, cfg.seed, 0, 0)[0])
    set_trainable(pol, actor=True, critic=True)
    pol.model.train()
    for p in actor_parameters(pol) + critic_parameters(pol):
        p.grad = None  # update() leaves its last minibatch's gradients behind
    loss, _ = ppo_loss(token_logprobs(pol, ids[mb], att[mb]), old_lp[mb], adv[mb], values(pol, ids[mb], att[mb]),
                       ret[mb], mask[mb], replace(cfg.ppo, whiten_advantages=False))
    loss.backward()
    ref_actor = [p.grad for p in actor_parameters(pol)]
    ref_critic = [p.grad for p in critic_parameters(pol)]
    for got, ref in ((new_actor, ref_actor), (new_critic, ref_critic), (plain_actor, ref_actor), (plain_critic, ref_critic)):
        assert all(r is not None and g is not None for g, r in zip(got, ref))
        assert all(torch.allclose(g, r, atol=1e-5, rtol=1e-4) for g, r in zip(got, ref))
    assert any(r.abs().max() > 1e-4 for r in ref_actor) and any(r.abs().max() > 1e-4 for r in ref_critic)


def test_only_minibatches_past_the_token_budget_are_checkpointed(tok, monkeypatch):
    """With checkpointing off, a minibatch whose rows x width passes `checkpoint_tokens` still trains checkpointed
    (one long episode must not take a step past the machine's memory); the others train without; 0 turns it off."""
    from rsi_lite.policy import critic
    from rsi_lite.rpr import update as rpr

    assert rpr.checkpointed(RPRConfig(gradient_checkpointing=True, checkpoint_tokens=0), 1, 1)
    assert not rpr.checkpointed(RPRConfig(gradient_checkpointing=False, checkpoint_tokens=0), 64, 4096)
    assert rpr.checkpointed(RPRConfig(gradient_checkpointing=False, checkpoint_tokens=60), 2, 31)
    assert not rpr.checkpointed(RPRConfig(gradient_checkpointing=False, checkpoint_tokens=60), 2, 30)

    pol = tiny_actor_critic(tok)
    trajs = fake_trajectories(4)
    for t, n in zip(trajs, (40, 24, 33, 19)):  # minibatches of 2: widths 40 (80 tokens) and 24 (48 tokens)
        t.token_ids, t.action_mask, t.logprobs = t.token_ids[:n], t.action_mask[:n], t.logprobs[:n]
    active, seen = [False], []

    @contextlib.contextmanager
    def recording(model):
        active[0] = True
        try:
            yield
        finally:
            active[0] = False

    plain_values = critic.values

    def recorded_values(policy, ids, att):
        if torch.is_grad_enabled():  # the training passes (the "old" pass runs under no_grad)
            seen.append((ids.shape[1], active[0]))
        return plain_values(policy, ids, att)

    monkeypatch.setattr(rpr, "checkpointing", recording)
    monkeypatch.setattr(critic, "values", recorded_values)
    cfg = RPRConfig(minibatch=2, ppo_epochs=1, gradient_checkpointing=False, checkpoint_tokens=60)
    update(pol, trajs, cfg, make_optimizers(pol, cfg), train_actor=True)
    assert sorted(seen) == [(24, False), (40, True)]


def test_action_only_logprobs_equal_the_full_ones_on_action_tokens(tok):
    pol = tiny_actor_critic(tok)
    ids, att, mask, _, _ = batch_tensors(fake_trajectories(3), "spr", tok.pad_token_id)
    with torch.no_grad():
        full, only = token_logprobs(pol, ids, att), token_logprobs(pol, ids, att, only=mask)
    assert torch.allclose(full * mask, only, atol=1e-6) and (only[mask == 0] == 0).all()
    assert (full[:, 1:] != 0).all()  # the default still scores every token after the first
    assert (token_logprobs(pol, ids, att, only=torch.zeros_like(mask)) == 0).all()


def test_critic_learns_values_explained_variance_rises(tok):
    pol = tiny_actor_critic(tok)
    cfg = RPRConfig(minibatch=4, critic_lr=3e-3, estimator="tb_gae")
    opt = make_optimizers(pol, cfg)
    trajs = fake_trajectories(8)
    rows = [update(pol, trajs, cfg, opt, train_actor=False, epochs=5) for _ in range(6)]
    ev = [r["losses/explained_variance_before"] for r in rows]
    assert ev[-1] > ev[0] and ev[-1] > 0.0, ev
    # the returns' spread is logged beside it (what makes a large negative figure readable)
    assert all(r["returns/std"] > 0 for r in rows)


def test_the_estimator_comes_from_the_registry_and_a_missing_one_is_named_with_the_choices(monkeypatch):
    from rsi_lite.algos import advantages
    from rsi_lite.rpr.targets import advantages_for

    with pytest.raises(ValueError, match=r"RPRConfig.estimator: 'td' is not one of tb_gae, gae"):
        RPRConfig(estimator="td")
    cfg = RPRConfig()
    cfg.estimator = "td"  # set after the config's own check: the update still names the field and the choices
    rewards, values, mask = torch.zeros(1, 3), torch.zeros(1, 3), torch.ones(1, 3, dtype=torch.long)
    with pytest.raises(ValueError, match=r"RPRConfig.estimator: 'td' is not one of tb_gae, gae"):
        advantages_for(cfg, rewards, values, mask)
    monkeypatch.setitem(advantages.ESTIMATORS, "td", lambda r, v, m, done, g, lam: (r - v + g, r + lam))
    adv, ret = advantages_for(RPRConfig(estimator="td", gamma_turn=0.5, lam_turn=0.25), rewards, values, mask)
    assert (adv == 0.5).all() and (ret == 0.25).all()


def test_accumulating_over_the_batch_gives_the_gradient_of_one_minibatch_of_everything(tok):
    """`accumulate=0`: the length groups' gradients add up, token-weighted, to the step one minibatch holding the
    whole batch would take, so one optimizer step weighs the batch's successes and failures together."""
    from rsi_lite.policy.critic import actor_parameters, critic_parameters

    trajs = fake_trajectories(4)
    for t, n in zip(trajs, (40, 24, 33, 19)):
        t.token_ids, t.action_mask, t.logprobs = t.token_ids[:n], t.action_mask[:n], t.logprobs[:n]

    def first_step(cfg):
        pol = tiny_actor_critic(tok)
        with torch.no_grad():
            for n, p in pol.model.named_parameters():
                if "lora_B" in n:
                    p.normal_(std=0.2, generator=torch.Generator().manual_seed(hash(n) % 2**31))
        opt = {"actor": _GradRecorder(actor_parameters(pol)), "critic": _GradRecorder(critic_parameters(pol))}
        update(pol, trajs, cfg, opt, train_actor=True)
        return opt["actor"].seen, opt["critic"].seen

    acc_actor, acc_critic = first_step(RPRConfig(minibatch=2, accumulate=0, max_grad_norm=1e9))
    one_actor, one_critic = first_step(RPRConfig(minibatch=4, max_grad_norm=1e9))
    assert len(acc_actor) == 1 and len(one_actor) == 1  # one optimizer step each
    for got, ref in ((acc_actor[0], one_actor[0]), (acc_critic[0], one_critic[0])):
        assert all(torch.allclose(g, r, atol=1e-5, rtol=1e-4) for g, r in zip(got, ref))
    assert len(first_step(RPRConfig(minibatch=2, accumulate=1))[0]) == 2  # the default: a step per minibatch


def test_explained_variance_after_the_update_is_the_whole_batchs_not_a_mean_of_minibatches(tok):
    """One episode a minibatch and Monte-Carlo returns (gamma 1, lambda 1): each minibatch's returns are one
    number, so a per-minibatch figure has no spread to explain (a mean of them read NaN, or -1e4 on near-constant
    ones); the batch-wide one is finite and, with a critic that does not move (lr 0), equals the figure before."""
    pol = tiny_actor_critic(tok)
    cfg = RPRConfig(minibatch=1, critic_lr=0.0, estimator="tb_gae", gamma_turn=1.0, lam_turn=1.0)
    row = update(pol, fake_trajectories(6), cfg, make_optimizers(pol, cfg), train_actor=False, epochs=2)
    assert row["losses/explained_variance"] == pytest.approx(row["losses/explained_variance_before"], abs=1e-6)
    assert row["losses/explained_variance"] == row["losses/explained_variance"]  # not NaN


def test_value_at_turn_gives_every_token_of_a_turn_one_advantage_and_is_refused_without_a_critic(tok):
    from rsi_lite.algos.advantages import turn_index
    from rsi_lite.rpr.targets import advantages_for

    with pytest.raises(ValueError, match="RPRConfig.value_at: 'step' is neither"):
        RPRConfig(value_at="step")
    with pytest.raises(ValueError, match="RPRConfig.value_at: 'turn'; the estimator 'grpo' reads no"):
        RPRConfig(value_at="turn", estimator="grpo", rollouts_per_task=2, warmup_tasks=0, calibration_steps=0)
    trajs = fake_trajectories(4)
    _, _, mask, _, rewards = batch_tensors(trajs, "spr", 0)
    values = torch.rand(mask.shape, generator=torch.Generator().manual_seed(0))
    adv, ret = advantages_for(RPRConfig(value_at="turn"), rewards, values, mask)
    turns = turn_index(mask)
    for row in range(len(trajs)):
        for k in (1, 2):
            on = mask[row].bool() & (turns[row] == k)
            assert adv[row][on].unique().numel() == 1 and ret[row][on].unique().numel() == 1
    token_adv, _ = advantages_for(RPRConfig(), rewards, values, mask)
    assert not torch.allclose(adv, token_adv)
    # the update runs with it, and the critic still fits every token (its value loss is finite)
    pol = tiny_actor_critic(tok)
    cfg = RPRConfig(minibatch=2, actor_lr=1e-3, critic_lr=1e-3, value_at="turn")
    row = update(pol, trajs, cfg, make_optimizers(pol, cfg), train_actor=True)
    assert row["losses/value"] == row["losses/value"] and row["losses/explained_variance"] == row["losses/explained_variance"]


def test_an_unparsed_reply_is_charged_on_its_last_token_and_the_penalty_needs_a_critic():
    """`RPRConfig.unparsed_penalty`: the cpu run's RPR-1 drifted to last replies that ran nothing (docs/experiments.md
    2026-12-07). Each such reply earns -p on its last token, beside the episode's reward; a reply that parses (a
    command, the done marker) earns nothing extra, and without the penalty the rewards are the paper's."""
    with pytest.raises(ValueError, match="RPRConfig.unparsed_penalty: -0.1 is negative"):
        RPRConfig(unparsed_penalty=-0.1)
    with pytest.raises(ValueError, match="RPRConfig.unparsed_penalty: 0.2; the estimator 'grpo' judges whole"):
        RPRConfig(unparsed_penalty=0.2, estimator="grpo", rollouts_per_task=2, warmup_tasks=0, calibration_steps=0)
    replies = [("```bash\nls\n```", "TASK COMPLETE"), ("```bash\nls\n```", "TASK COMPLIMMER Plus and CLEAR"),
               ("no command here", "TASK COMPLETE")]
    trajs = [replace(t, messages=[{"role": "assistant", "kind": "action", "content": a},
                                  {"role": "user", "kind": "observation", "content": ""},
                                  {"role": "assistant", "kind": "action", "content": b}])
             for t, (a, b) in zip(fake_trajectories(3), replies)]
    _, _, mask, _, paper = batch_tensors(trajs, "spr", 0)
    _, _, _, _, charged = batch_tensors(trajs, "spr", 0, "final", 0.2)
    diff = charged - paper
    assert torch.equal(diff[0], torch.zeros_like(diff[0]))
    assert diff[1].nonzero().flatten().tolist() == [39] and diff[1, 39] == pytest.approx(-0.2)   # turn 2 ends at 40
    assert diff[2].nonzero().flatten().tolist() == [17] and diff[2, 17] == pytest.approx(-0.2)   # turn 1 ends at 18
    assert charged[1, 39] == pytest.approx(paper[1, 39] - 0.2)  # beside the final reward on the same token


def test_the_penalty_adds_to_per_turn_rewards_and_cannot_make_a_success_score_below_a_failure():
    """With `reward_timing` 'turn' the deltas go on each turn's last token first and the penalty is subtracted on the
    same token, so an episode's return is its reward minus p per unparsed reply; a p that could take a success
    under SPR's failures (p x (max_turns - 1) >= 1 - alpha) is refused."""
    from rsi_lite.algos.rewards import DEFAULT_ALPHA
    from rsi_lite.rollout.engine import RolloutConfig

    with pytest.raises(ValueError, match=r"RPRConfig.unparsed_penalty: 0.3 x \(max_turns - 1\) = 0.6 reaches"):
        RPRConfig(unparsed_penalty=0.3, rollout=RolloutConfig(max_turns=3))
    assert 0.2 * 2 < 1 - DEFAULT_ALPHA  # the committed config's p at 3 turns is allowed
    RPRConfig(unparsed_penalty=0.2, rollout=RolloutConfig(max_turns=3))
    (t,) = fake_trajectories(1)
    t = replace(t, messages=[{"role": "assistant", "kind": "action", "content": "```bash\nls\n```"},
                             {"role": "user", "kind": "observation", "content": ""},
                             {"role": "assistant", "kind": "action", "content": "prose"}],
                turn_rewards={"spr": [0.25, 1.0]})
    _, _, _, _, turn = batch_tensors([t], "spr", 0, "turn")
    _, _, _, _, charged = batch_tensors([t], "spr", 0, "turn", 0.2)
    assert turn[0, 17] == pytest.approx(0.25) and turn[0, 39] == pytest.approx(0.75)
    assert charged[0, 39] == pytest.approx(0.55) and charged.sum() == pytest.approx(1.0 - 0.2)


@pytest.mark.parametrize("case", ["joint", "critic-only", "grpo", "one-epoch"])
def test_the_old_pass_folded_into_the_first_epoch_gives_the_same_update(tok, case):
    """`RPRConfig.fold_old_pass`: with the first epoch one optimizer step, its own forwards give the old values and
    log-probabilities. On a batch where that could go wrong (successes and failures of different lengths, three
    minibatches, per-turn values, clipping and the rollout correction active, a second epoch that sees the moved
    actor), every weight and every metric must equal the separate old pass's, and the metric says which ran."""
    lengths = (40, 24, 33, 19, 37, 28)
    trajs = fake_trajectories(6)
    for i, (t, n) in enumerate(zip(trajs, lengths)):
        t.token_ids, t.action_mask = t.token_ids[:n], t.action_mask[:n]
        t.logprobs = [(-0.5 - 0.1 * i) if m else 0.0 for m in t.action_mask]  # far from the model's: TIS weights bite
        t.task = f"t{i // 2}"  # pairs of episodes of one task (grpo's groups), one success and one failure each
    cfg = RPRConfig(minibatch=2, accumulate=0, ppo_epochs=2, actor_lr=5e-2, critic_lr=5e-2, value_at="turn",
                    rollout_correction="on", gradient_checkpointing=False)
    train_actor = case != "critic-only"
    if case == "grpo":
        cfg = replace(cfg, estimator="grpo", rollouts_per_task=2, warmup_tasks=0, calibration_steps=0, value_at="token")
    if case == "one-epoch":
        cfg = replace(cfg, ppo_epochs=1)

    def run(fold):
        pol = tiny_actor_critic(tok)
        with torch.no_grad():  # non-zero adapters, fixed (str hashes vary by process): a start where clipping bites
            for n, p in pol.model.named_parameters():
                if "lora_B" in n:
                    p.normal_(std=0.2, generator=torch.Generator().manual_seed(zlib.crc32(f"7{n}".encode())))
        c = replace(cfg, fold_old_pass=fold)
        row = update(pol, trajs, c, make_optimizers(pol, c), train_actor=train_actor)
        return _snapshot(pol), row

    (after_f, row_f), (after_s, row_s) = run(True), run(False)
    assert row_f["update/old_pass_folded"] == 1.0 and row_s["update/old_pass_folded"] == 0.0
    assert after_f.keys() == after_s.keys()
    moved = [n for n in after_f if not torch.equal(after_s[n], _snapshot(tiny_actor_critic(tok)).get(n, after_s[n]))]
    assert moved  # the update did something to compare
    for n in after_f:
        assert torch.allclose(after_f[n], after_s[n], atol=1e-6, rtol=1e-5), n
    assert row_f.keys() - {"update/old_pass_folded"} == row_s.keys() - {"update/old_pass_folded"}
    for k in row_s.keys() - {"update/old_pass_folded"}:
        assert row_f[k] == pytest.approx(row_s[k], abs=1e-5, rel=1e-4, nan_ok=True), k
    if train_actor:
        assert row_s["tis/on"] == 1.0 and abs(row_s["tis/weight_mean"] - 1) > 0.05  # the correction weighs
    if train_actor and cfg.ppo_epochs == 2:
        assert row_s["losses/clipfrac"] > 0 and row_s["ratio/min"] < 1 < row_s["ratio/max"]  # epoch 2 saw the move


def test_the_old_pass_is_separate_where_the_first_epoch_takes_several_steps_or_a_reference(tok):
    from rsi_lite.rpr.update import folds_old_pass

    pol = tiny_actor_critic(tok)
    groups = [0, 1, 2]
    assert folds_old_pass(pol, RPRConfig(accumulate=0), groups, True)
    assert folds_old_pass(pol, RPRConfig(accumulate=3), groups, True)
    assert not folds_old_pass(pol, RPRConfig(accumulate=1), groups, True)  # a step per minibatch: later ones moved
    assert not folds_old_pass(pol, RPRConfig(accumulate=0, fold_old_pass=False), groups, True)
    assert not folds_old_pass(pol, RPRConfig(accumulate=0, ref_kl=0.1), groups, True)
    assert folds_old_pass(pol, RPRConfig(accumulate=0, ref_kl=0.1), groups, False)  # a critic-only update reads none
    pol.model.base_model.model.model.layers[0].self_attn.config.attention_dropout = 0.1
    assert not folds_old_pass(pol, RPRConfig(accumulate=0), groups, True)  # a training forward would differ
