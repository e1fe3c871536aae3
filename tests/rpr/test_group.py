"""The critic-free control (`RPRConfig.estimator` 'rloo' or 'grpo'): group-relative advantages, the k rollouts of a
task drawn into one batch, and those k rollouts sampled independently of each other.

Run: pytest tests/rpr/test_group.py
"""

import pytest
import torch

from rsi_lite.algos.advantages import episode_advantages, group_ids, grpo, rloo
from rsi_lite.rollout.engine import RolloutConfig, run_episodes
from rsi_lite.rpr.batches import step_jobs
from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.targets import group_advantages
from rsi_lite.tasks import find_tasks

from ..conftest import TASKS


def test_rloo_is_each_reward_minus_the_mean_of_the_others():
    r = torch.tensor([1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 1.0])
    g = torch.tensor([0, 0, 0, 0, 1, 1, 2])
    expected = [1.0, -1 / 3, -1 / 3, -1 / 3, 0.0, 0.0, 0.0]  # group 1's rewards are equal; group 2 is alone
    assert rloo(r, g).tolist() == pytest.approx(expected)


def test_grpo_is_each_reward_standardised_within_its_group():
    r = torch.tensor([1.0, 0.0, 0.0, 0.0, 0.3, 0.3])
    g = torch.tensor([0, 0, 0, 0, 1, 1])
    a = grpo(r, g)
    first = r[:4]
    assert a[:4].tolist() == pytest.approx(((first - first.mean()) / first.std(unbiased=False)).tolist(), abs=1e-5)
    assert a[4:].tolist() == [0.0, 0.0]


def test_rloo_is_an_unbiased_baseline_its_advantages_sum_to_zero_in_each_group():
    gen = torch.Generator().manual_seed(0)
    r = torch.rand(40, generator=gen)
    g = torch.randint(0, 7, (40,), generator=gen)
    a = rloo(r, g)
    for k in g.unique():
        assert float(a[g == k].sum()) == pytest.approx(0.0, abs=1e-5)


def test_group_advantages_sit_on_the_action_tokens_only_and_count_the_groups_with_no_signal():
    class T:
        def __init__(self, task, r):
            self.task, self.rewards = task, {"spr": r}

    trajs = [T("a", 1.0), T("a", 0.0), T("b", 1.0), T("b", 1.0)]
    mask = torch.tensor([[0, 1, 1, 0], [0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]])
    cfg = RPRConfig(estimator="rloo", rollouts_per_task=2, warmup_tasks=0, calibration_steps=0)
    adv, ret, info = group_advantages(cfg, trajs, mask)
    assert adv.tolist() == [[0, 1, 1, 0], [0, -1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert ret.abs().sum() == 0
    assert info == {"groups/uninformative": 0.5, "groups/count": 2}
    assert group_ids(["x", "y", "x"]).tolist() == [0, 1, 0]
    assert episode_advantages(torch.tensor([2.0]), torch.tensor([[1, 0]])).tolist() == [[2.0, 0.0]]


@pytest.mark.parametrize("bad, field", [({"rollouts_per_task": 1}, "rollouts_per_task"),
                                        ({"warmup_tasks": 4}, "warmup_tasks"),
                                        ({"calibration_steps": 1}, "calibration_steps"),
                                        ({"reward_timing": "turn"}, "reward_timing")])
def test_a_critic_free_stage_refuses_settings_it_cannot_use(bad, field):
    ok = {"estimator": "grpo", "rollouts_per_task": 4, "warmup_tasks": 0, "calibration_steps": 0}
    RPRConfig(**ok)
    with pytest.raises(ValueError, match=field):
        RPRConfig(**{**ok, **bad})


def test_each_drawn_task_gets_k_rollouts_with_k_different_episode_seeds(tmp_path):
    tasks = find_tasks(TASKS / "core")[:6]
    cfg = RPRConfig(estimator="rloo", rollouts_per_task=4, warmup_tasks=0, calibration_steps=0, batch_rule="uniform",
                    batch_tasks=3, steps=2)
    for k in range(2):
        _, jobs, _ = step_jobs(cfg, tasks, tmp_path, k)
        by_task: dict = {}
        for task, seed in jobs:
            by_task.setdefault(task.name, []).append(seed)
        assert len(by_task) == 3 and all(len(set(s)) == 4 for s in by_task.values()), by_task


@pytest.mark.parametrize("backend", ["native", "transformers"])
def test_the_k_rollouts_of_one_task_are_sampled_independently(backend, bwrap_ok):
    """Eight rollouts of one task, in one batch as a critic-free step draws them: the same prompt, so the same
    first-token distribution (equal recorded log-probabilities for equal tokens), but eight draws from it, not one
    draw copied. A model whose replies are almost uniform over its vocabulary (a tiny random one) makes any two
    independent replies of 8 tokens differ; a shared sampling seed or a reply copied with the prompt's cached
    prefix would make them equal."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from rsi_lite.policy.model import Policy, PolicyConfig, prepare_model

    tok = AutoTokenizer.from_pretrained(str(prepare_model()))
    tok.pad_token, tok.padding_side = tok.eos_token, "left"
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096)
    policy = Policy(LlamaForCausalLM(cfg).eval(), tok, PolicyConfig(quantization="full"))
    task = find_tasks(TASKS / "core")[0]
    k = 8
    trajs = run_episodes(policy, [(task, 1000 + i) for i in range(k)],
                         RolloutConfig(max_turns=1, max_new_tokens=8, temperature=1.0, batch_size=k,
                                       generation_backend=backend))
    replies = [tuple(x for x, m in zip(t.token_ids, t.action_mask) if m) for t in trajs]
    prompts = {tuple(t.token_ids[:t.turn_spans[0][0]]) for t in trajs}
    assert len(prompts) == 1  # one task: one prompt
    assert len(set(replies)) == k, replies
    first = {}
    for t in trajs:
        a = t.turn_spans[0][0]
        first.setdefault(t.token_ids[a], []).append(t.logprobs[a])
    for lps in first.values():  # one state, one distribution: a token drawn twice has one probability
        assert max(lps) - min(lps) < 1e-4, first
