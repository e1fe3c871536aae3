"""The notebooks' exercise checkers: a plain solution written from the notebook's text passes, the stub and
the usual mistakes fail with a message. Run: pytest tests/teach/test_exercises.py
"""

import json
import math

import torch

from rsi_lite.teach.exercises import (
    check_action_logprobs,
    check_clipped_loss,
    check_masked_nll,
    check_rewards,
    check_verdict,
)


def stub(*args):
    raise NotImplementedError("YOUR CODE HERE")


# 02 · the masked NLL of self-rewrite

def nll_solution(logits, input_ids, loss_mask):
    total, count = 0.0, 0
    for b in range(input_ids.shape[0]):
        for t in range(1, input_ids.shape[1]):  # token t is predicted by the logits at t - 1
            if loss_mask[b, t]:
                total -= torch.log_softmax(logits[b, t - 1], -1)[input_ids[b, t]].item()
                count += 1
    return total / max(count, 1)


def nll_unshifted(logits, input_ids, loss_mask):
    logp = torch.log_softmax(logits, -1).gather(-1, input_ids.unsqueeze(-1)).squeeze(-1)
    return -(logp * loss_mask).sum() / loss_mask.sum()


def test_the_masked_nll_checker():
    assert check_masked_nll(nll_solution) == (True, "correct on 10 random batches")
    assert check_masked_nll(stub) == (False, "not yet: NotImplementedError: YOUR CODE HERE")
    ok, msg = check_masked_nll(nll_unshifted)
    assert not ok and "t - 1" in msg


# 03 · FDR and SPR from a CTRF report

def rewards_solution(ctrf_json, reward_txt, divisor, alpha):
    tests = json.loads(ctrf_json)["results"]["tests"]
    p = sum(t["status"] == "passed" for t in tests)
    s = int(reward_txt.strip() == "1")
    return p / divisor, s + (1 - s) * alpha * min(p / divisor, 1)


def rewards_counting_skips(ctrf_json, reward_txt, divisor, alpha):
    tests = json.loads(ctrf_json)["results"]["tests"]
    p = sum(t["status"] != "failed" for t in tests)
    s = int(reward_txt.strip() == "1")
    return p / divisor, s + (1 - s) * alpha * min(p / divisor, 1)


def rewards_unbounded(ctrf_json, reward_txt, divisor, alpha):
    fdr, _ = rewards_solution(ctrf_json, reward_txt, divisor, alpha)
    s = int(reward_txt.strip() == "1")
    return fdr, s + (1 - s) * alpha * fdr  # forgets min(., 1): a failure could outscore a success


def test_the_rewards_checker():
    assert check_rewards(rewards_solution) == (True, "correct on 30 random reports")
    assert check_rewards(stub)[0] is False
    assert not check_rewards(rewards_counting_skips)[0]
    assert not check_rewards(rewards_unbounded, trials=200)[0]


# 05 · the asymmetric clipped surrogate

def clipped_solution(logprobs, old_logprobs, advantages, mask, low, high):
    terms = []
    for lp, old, a, m in zip(logprobs, old_logprobs, advantages, mask):
        if m:
            r = math.exp(lp - old)
            terms.append(min(r * a, min(max(r, low), high) * a))
    return -sum(terms) / len(terms)


def clipped_symmetric(logprobs, old_logprobs, advantages, mask, low, high):
    return clipped_solution(logprobs, old_logprobs, advantages, mask, low, 2 - low)


def test_the_clipped_loss_checker():
    assert check_clipped_loss(clipped_solution) == (True, "correct on 20 random sequences")
    assert check_clipped_loss(stub)[0] is False
    assert not check_clipped_loss(clipped_symmetric)[0]


# 00 · S and P from the verifier's files

def verdict_solution(ctrf_json, reward_txt):
    tests = json.loads(ctrf_json)["results"]["tests"]
    passed = sum(t["status"] == "passed" for t in tests)
    failed = sum(t["status"] == "failed" for t in tests)
    return int(reward_txt.strip() == "1" and failed == 0 and passed > 0), passed


def verdict_trusting_the_reward_file(ctrf_json, reward_txt):
    _, passed = verdict_solution(ctrf_json, reward_txt)
    return int(reward_txt.strip() == "1"), passed  # a reward file that says pass while a test failed is no success


def test_the_verdict_checker():
    assert check_verdict(verdict_solution) == (True, "correct on 40 random reports")
    assert check_verdict(stub)[0] is False
    ok, msg = check_verdict(verdict_trusting_the_reward_file)
    assert not ok and "reward file says pass" in msg


# 01 · the action tokens' log-probabilities

def logprobs_solution(logits, input_ids, action_mask, temperature):
    out = torch.zeros(input_ids.shape)
    for b in range(input_ids.shape[0]):
        for t in range(1, input_ids.shape[1]):  # token t is predicted by the logits at t - 1
            if action_mask[b, t]:
                out[b, t] = torch.log_softmax(logits[b, t - 1] / temperature, -1)[input_ids[b, t]]
    return out


def test_the_action_logprobs_checker_passes_a_plain_solution_and_names_each_usual_mistake():
    from rsi_lite.policy.critic import gather_logprobs

    assert check_action_logprobs(logprobs_solution) == (True, "correct on 12 random batches (temperatures 0.3 to 1.5)")
    assert check_action_logprobs(stub) == (False, "not yet: NotImplementedError: YOUR CODE HERE")
    mistakes = {
        "no shift": lambda z, ids, m, T: gather_logprobs(z, ids, T) * m,
        "no temperature": lambda z, ids, m, T: logprobs_solution(z, ids, m, 1.0),
        "after the log-softmax": lambda z, ids, m, T: logprobs_solution(z, ids, m, 1.0) / T,
        "no mask": lambda z, ids, m, T: logprobs_solution(z, ids, torch.ones_like(m), T),
        "probabilities, not": lambda z, ids, m, T: logprobs_solution(z, ids, m, T).exp() * m,
    }
    for name, wrong in mistakes.items():
        ok, msg = check_action_logprobs(wrong)
        assert not ok and name in msg, (name, msg)
    ok, msg = check_action_logprobs(lambda z, ids, m, T: torch.zeros(ids.shape[0]))
    assert not ok and "shape" in msg


def test_the_reference_is_what_token_logprobs_computes_on_a_model():
    """The checker's reference on a tiny model's full logits equals `token_logprobs(..., only=mask)`."""
    from transformers import AutoTokenizer

    from rsi_lite.policy.critic import token_logprobs
    from rsi_lite.policy.model import prepare_model
    from rsi_lite.teach.exercises import reference_action_logprobs

    from ..rpr.test_stage import tiny_actor_critic

    pol = tiny_actor_critic(AutoTokenizer.from_pretrained(str(prepare_model())))
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, 1000, (2, 12), generator=g)
    att, mask = torch.ones_like(ids), (torch.rand(2, 12, generator=g) > 0.5).long()
    with torch.no_grad():
        logits = pol.model(input_ids=ids, attention_mask=att).logits
        want = token_logprobs(pol, ids, att, temperature=0.6, only=mask)
    assert torch.allclose(reference_action_logprobs(logits, ids, mask, 0.6), want, atol=1e-5)


# 00 · whitening a batch's advantages

def whiten_solution(adv, mask):
    on = mask.bool()
    x = adv[on]
    mean, var = x.mean(), ((x - x.mean()) ** 2).mean()
    return torch.where(on, (adv - mean) / torch.sqrt(var + 1e-8), torch.zeros_like(adv))


def test_the_whiten_checker_passes_a_plain_solution_and_names_each_usual_mistake():
    from rsi_lite.teach.exercises import check_whiten

    assert check_whiten(whiten_solution) == (True, "correct on 12 random batches (padding and equal advantages among them)")
    assert check_whiten(stub) == (False, "not yet: NotImplementedError: YOUR CODE HERE")

    def no_eps(adv, mask):
        on = mask.bool()
        x = adv[on]
        return torch.where(on, (adv - x.mean()) / x.std(unbiased=False), torch.zeros_like(adv))

    def whole_tensor(adv, mask):
        return torch.where(mask.bool(), (adv - adv.mean()) / torch.sqrt(adv.var(unbiased=False) + 1e-8), 0.0)

    def unbiased(adv, mask):
        on = mask.bool()
        x = adv[on]
        return torch.where(on, (adv - x.mean()) / torch.sqrt(x.var(unbiased=True) + 1e-8), torch.zeros_like(adv))

    def padding_kept(adv, mask):
        return whiten_solution(adv, mask) + (1 - mask) * adv

    for wrong, words in ((no_eps, "eps"), (whole_tensor, "padding"), (unbiased, "n - 1"), (padding_kept, "must be 0")):
        ok, msg = check_whiten(wrong)
        assert not ok and words in msg, (wrong.__name__, msg)
