"""The kit's PPO update learns from the reward, and only from the reward.

A synthetic one-step task on a tiny random model: a fixed chat prompt, then a one-word action (the word and
`<|im_end|>`, one turn) out of four candidate words; the episodes that act the first word succeed (strict
reward 1), the others fail. `rsi_lite.rpr.update.update`, the stage's own (critic values, TB-GAE advantages,
whitening, the 0.7 / 6.0 clipped loss, the value loss, the optimizers of `make_optimizers`), runs a few joint
updates on that batch, and the rewarded word's probability must rise past a stated threshold. With the same
rewards spread one per candidate (shuffled so that they no longer depend on the action) it must not. It guards
the sign of the advantages, the action mask and the optimizer path of every later change: flip the sign, zero
the mask or put it on the prompt instead of the action, or skip the actor's optimizer step, and the first test
fails.

What is measured is the rewarded word's share of the four candidates' probability, p(A | prompt, the action is
one of the candidates), which starts near 1/4; the probability over the whole vocabulary must rise as well.
The model is `random_model` with a 256-wide hidden state: with the default 64, its tied embeddings (std 0.02)
bound every logit by 0.02 x the width (about 1.3), so no update can make one word much likelier than another.

The same two tests run with the critic-free estimators ('rloo', 'grpo'): the control's update path (no critic,
each episode against its group) must learn and not learn alike.

Run: pytest tests/rpr/test_learns.py
"""

import pytest
import torch

from rsi_lite.policy.critic import ACTOR, token_logprobs, using_adapter
from rsi_lite.rollout.trajectory import Trajectory
from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.stage import init_value_bias, load_actor_critic, make_optimizers
from rsi_lite.rpr.update import update

PROMPT = "<|im_start|>user\nPick a word.<|im_end|>\n<|im_start|>assistant\n"
WORDS = ["apple", "river", "stone", "cloud"]
"""The candidate actions, one token each in the bundled tokenizer; the first earns the reward."""
PER_WORD = 4
"""Episodes of each candidate in a batch: the real batch has PER_WORD successes, all on the first word."""
UPDATES = 6
"""Joint updates (one batch, one optimizer step each: accumulate 0, one PPO epoch)."""
ACTOR_LR = 2e-2
"""Raised from the stage's default so that a few updates move the actor; much higher, some random models diverge."""
CRITIC_LR = 1e-2
"""Raised with it: a critic that learns slowly keeps its small differences between the words' values from update
to update, and the control's actor (whose Adam steps have their full size however small the gradient) then drifts
one way; a fast one does not hold a direction."""
LEARNED_SHARE = 0.6
"""After the updates on the real rewards, the rewarded word's share of the candidates' probability is above this."""
LEARNED_GAIN = 2.0
"""... and its probability over the whole vocabulary at least this many times its start."""
CONTROL_RISE = 0.15
"""After the updates on the shuffled rewards, its share is below its start plus this: the control's actor does
move (see CRITIC_LR), so "does not rise" has a margin."""


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from rsi_lite.policy.model import random_model

    return random_model(tmp_path_factory.mktemp("learns") / "random", hidden=256, seed=0)


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread: the model is too small to gain from more, and on a machine whose cores are busy
    several threads wait on each other (a several-fold slowdown)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def task_ids(tok):
    """(prompt ids, the candidates' ids, the end-of-turn id)."""
    prompt = tok.encode(PROMPT, add_special_tokens=False)
    words = [tok.encode(w, add_special_tokens=False) for w in WORDS]
    assert all(len(w) == 1 for w in words), words
    return prompt, [w[0] for w in words], tok.convert_tokens_to_ids("<|im_end|>")


def episodes(policy, rewards: list[float]) -> list[Trajectory]:
    """The batch as the rollout records it: the prompt (mask 0), then the action `word <|im_end|>` (mask 1, one
    turn) with its log-probabilities under the current actor; episode i acts WORDS[i // PER_WORD] and earns
    rewards[i] as its strict verdict."""
    prompt, words, end = task_ids(policy.tokenizer)
    n = len(prompt)
    ids = [prompt + [words[i // PER_WORD], end] for i in range(len(rewards))]
    mask = [0] * n + [1, 1]
    t = torch.tensor(ids)
    with torch.no_grad():
        lps = token_logprobs(policy, t, torch.ones_like(t), only=torch.tensor([mask] * len(ids))).tolist()
    return [Trajectory(task="pick", task_path="", suite="pool", family="pick", difficulty="easy", harness="plain",
                       action_format="bash", policy="x", seed=0, system="", messages=[], token_ids=x,
                       action_mask=mask, logprobs=lp, turn_spans=[[n, n + 2]], finish_reason="complete", turns=1,
                       verifier={"strict": int(r), "passed": int(r), "total": 1}, rewards={"s": float(r)},
                       tokens={"generated": 2}, timings={})
            for x, lp, r in zip(ids, lps, rewards)]


def p_words(policy) -> torch.Tensor:
    """p(word | prompt) under the actor for each candidate, over the whole vocabulary: [len(WORDS)]."""
    prompt, words, _ = task_ids(policy.tokenizer)
    t = torch.tensor([prompt])
    with torch.no_grad(), using_adapter(policy.model, ACTOR):
        logits = policy.model(input_ids=t, attention_mask=torch.ones_like(t), logits_to_keep=1).logits[0, -1]
    return torch.softmax(logits.float(), -1)[words]


def real_rewards() -> list[float]:
    """Success exactly when the action is the first word."""
    return [float(i < PER_WORD) for i in range(PER_WORD * len(WORDS))]


def shuffled_rewards() -> list[float]:
    """The real batch's rewards moved across episodes so that each candidate has one success: the same rewards,
    independent of the action. (The episodes of one word are identical, so which of them succeeds is moot.)"""
    return [float(i % PER_WORD == 0) for i in range(PER_WORD * len(WORDS))]


ESTIMATORS = ["tb_gae", "rloo", "grpo"]
"""The paper's critic with TB-GAE, and the critic-free control's two estimators (every episode is one task's, so
the batch is one group)."""


def train(model_dir, rewards: list[float], estimator: str = "tb_gae", ref_kl: float = 0.0,
          rows: list | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The candidates' probabilities (`p_words`) before and after UPDATES joint updates on `rewards`, with a
    fresh actor and critic loaded as the stage loads them (and, with `ref_kl`, the frozen reference it adds);
    each update's metrics appended to `rows`."""
    from rsi_lite.policy.critic import add_reference

    policy = load_actor_critic("base", None, model=str(model_dir))
    if ref_kl:
        add_reference(policy, "base")
    group = {} if estimator == "tb_gae" else {"rollouts_per_task": len(rewards), "warmup_tasks": 0,
                                              "calibration_steps": 0}
    cfg = RPRConfig(reward="s", actor_lr=ACTOR_LR, critic_lr=CRITIC_LR, minibatch=len(rewards), accumulate=0,
                    gradient_checkpointing=False, estimator=estimator, ref_kl=ref_kl, **group)
    optims = make_optimizers(policy, cfg)
    before = p_words(policy)
    for k in range(UPDATES):
        trajs = episodes(policy, rewards)
        init_value_bias(policy, trajs, cfg.reward)  # as the stage does: a fresh critic starts at the mean reward
        row = update(policy, trajs, cfg, optims, train_actor=True, step=k)
        if rows is not None:
            rows.append(row)
    return before, p_words(policy)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_the_rewarded_action_becomes_likely(model_dir, estimator):
    before, after = train(model_dir, real_rewards(), estimator)
    share = float(after[0] / after.sum())
    assert share > LEARNED_SHARE, (f"share of the rewarded word {float(before[0] / before.sum()):.3f} -> {share:.3f}"
                                   f" (p {before.tolist()} -> {after.tolist()})")
    assert after[0] > LEARNED_GAIN * before[0], (before.tolist(), after.tolist())


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_rewards_that_ignore_the_action_teach_nothing(model_dir, estimator):
    before, after = train(model_dir, shuffled_rewards(), estimator)
    start, share = float(before[0] / before.sum()), float(after[0] / after.sum())
    assert share < start + CONTROL_RISE, f"share of the once-rewarded word {start:.3f} -> {share:.3f}"


def test_a_kl_penalty_to_the_incoming_actor_holds_the_actor_back(model_dir):
    """`RPRConfig.ref_kl`: the same updates with a strong penalty to the frozen incoming actor move the rewarded
    word's share less, the KL starts at 0 (the actor is its reference at the first update) and grows after."""
    before, free = train(model_dir, real_rewards())
    rows = []
    _, held = train(model_dir, real_rewards(), ref_kl=5.0, rows=rows)
    start = float(before[0] / before.sum())
    assert float(held[0] / held.sum()) - start < 0.5 * (float(free[0] / free.sum()) - start), (before, free, held)
    assert rows[0]["kl/ref_before"] == pytest.approx(0.0, abs=1e-6) and rows[-1]["kl/ref_before"] > 1e-4
    assert all("kl/ref" in r for r in rows)
