"""The notebooks' exercise checkers: a plain solution written from the notebook's text passes, the stub and
the usual mistakes fail with a message. Run: pytest tests/teach/test_exercises.py
"""

import json
import math

import pytest
import torch

from rsi_lite.teach.exercises import (
    check_action_logprobs,
    check_clipped_loss,
    check_masked_nll,
    check_predictions,
    check_rewards,
    check_selection,
    check_verdict,
)
from rsi_lite.teach.scale import check_fsdp_states, check_kv_tokens


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
    failed = sum(t["status"] == "failed" for t in tests)
    says_pass = reward_txt.strip() == "1"
    if not tests or (says_pass and failed) or (not says_pass and not failed and p):
        return 0.0, 0.0  # the reward file and the tests disagree: an invalid report, both rewards fall back to S = 0
    s = int(says_pass and p > 0)
    return p / divisor, s + (1 - s) * alpha * min(p / divisor, 1)


def rewards_ignoring_validity(ctrf_json, reward_txt, divisor, alpha):
    tests = json.loads(ctrf_json)["results"]["tests"]
    p = sum(t["status"] == "passed" for t in tests)
    s = int(reward_txt.strip() == "1")  # trusts the reward file and P whatever the report says
    return p / divisor, s + (1 - s) * alpha * min(p / divisor, 1)


def rewards_counting_skips(ctrf_json, reward_txt, divisor, alpha):
    skipped = sum(t["status"] == "skipped" for t in json.loads(ctrf_json)["results"]["tests"])
    fdr, spr = rewards_solution(ctrf_json, reward_txt, divisor, alpha)
    if (fdr, spr) == (0.0, 0.0) or not skipped:
        return fdr, spr
    p = fdr * divisor + skipped  # counts the skipped tests as passed
    s = int(spr >= 1)
    return p / divisor, s + (1 - s) * alpha * min(p / divisor, 1)


def rewards_unbounded(ctrf_json, reward_txt, divisor, alpha):
    fdr, spr = rewards_solution(ctrf_json, reward_txt, divisor, alpha)
    return fdr, spr if spr >= 1 else alpha * fdr  # forgets min(., 1): a failure could outscore a success


def test_the_rewards_checker():
    assert check_rewards(rewards_solution) == (True, "correct on 30 random reports")
    assert check_rewards(stub)[0] is False
    ok, msg = check_rewards(rewards_counting_skips)
    assert not ok and "skipped tests counted as passed" in msg
    ok, msg = check_rewards(rewards_unbounded, trials=200)
    assert not ok and "no min in SPR" in msg


def test_the_rewards_checker_feeds_invalid_reports_and_an_answer_that_ignores_validity_fails():
    ok, msg = check_rewards(rewards_ignoring_validity)
    assert not ok and "the report is invalid" in msg and "no fallback on an invalid report" in msg
    for seed in range(5):  # the reference passes whichever reports the trials draw
        assert check_rewards(rewards_solution, seed=seed)[0]


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
# 06 · which checkpoint the loop keeps, on val

def val(d):
    return d["suites"]["val"]["success"], d["suites"]["val"]["process_reward"]


def selection_solution(stages, evals):
    kept, out = stages[0], []
    for s in stages[1:]:
        if not val(evals[kept]) > val(evals[s]):  # a tie keeps the new one
            kept = s
        out.append(kept)
    return out


def selection_as_argmax(stages, evals):  # the same rule written as "the best so far, the latest on a tie"
    out = []
    for i in range(1, len(stages)):
        best = stages[0]
        for s in stages[1:i + 1]:
            if val(evals[s]) >= val(evals[best]):
                best = s
        out.append(best)
    return out


def selection_keeps_incoming_on_ties(stages, evals):
    kept, out = stages[0], []
    for s in stages[1:]:
        kept = s if val(evals[s]) > val(evals[kept]) else kept
        out.append(kept)
    return out


def selection_by_core(stages, evals):
    kept, out = stages[0], []
    for s in stages[1:]:
        a, b = (evals[x]["suites"]["core"] for x in (kept, s))
        kept = kept if (a["success"], a["process_reward"]) > (b["success"], b["process_reward"]) else s
        out.append(kept)
    return out


def selection_success_only(stages, evals):
    kept, out = stages[0], []
    for s in stages[1:]:
        kept = kept if val(evals[kept])[0] > val(evals[s])[0] else s
        out.append(kept)
    return out


def selection_process_reward_summed(stages, evals):
    kept, out = stages[0], []
    for s in stages[1:]:
        kept = kept if sum(val(evals[kept])) > sum(val(evals[s])) else s
        out.append(kept)
    return out


def selection_against_the_previous_phase(stages, evals):
    out = []
    for prev, s in zip(stages, stages[1:]):
        out.append(prev if val(evals[prev]) > val(evals[s]) else s)
    return out


def selection_with_base(stages, evals):  # off by one: an entry for Base too
    return [stages[0]] + selection_solution(stages, evals)


def selection_without_the_last(stages, evals):  # off by one: the last phase's selection dropped
    return selection_solution(stages[:-1], evals)


def selection_best_overall(stages, evals):  # the final checkpoint for every phase
    return [selection_solution(stages, evals)[-1]] * (len(stages) - 1)


@pytest.mark.parametrize("mistake, where", [
    (selection_keeps_incoming_on_ties, "a tie kept the incoming"), (selection_by_core, "picked by core"),
    (selection_success_only, "val success alone"), (selection_process_reward_summed, "success first"),
    (selection_against_the_previous_phase, "not against what was retained"),
    (selection_with_base, "Base is not a training phase"),
    (selection_without_the_last, "Base is not a training phase"), (selection_best_overall, "case")])
def test_the_selection_checker_rejects_each_usual_mistake(mistake, where):
    ok, msg = check_selection(mistake)
    assert not ok and where in msg, msg


def test_the_selection_checker_accepts_the_rule_however_written():
    from rsi_lite.teach.exercises import SELECTION_MISTAKES, _chain

    assert check_selection(selection_solution)[0]
    assert check_selection(_chain)[0]  # the mistakes' switches, all off, are the rule
    assert all(not check_selection(lambda s, e, kw=kw: _chain(s, e, **kw))[0] for kw in SELECTION_MISTAKES.values())
    assert check_selection(selection_as_argmax)[0]
    ok, msg = check_selection(stub)
    assert not ok and msg.startswith("not yet")


def test_the_predictions_checker():
    answers = {"a": {"question": "qa", "answer": True, "figures": "1 vs 0", "source": "s"},
               "b": {"question": "qb", "answer": False, "figures": "0 vs 0", "source": "s"},
               "c": {"question": "qc", "answer": None, "figures": None, "source": "s"}}
    assert check_predictions({"a": None, "b": None, "c": None}, answers)[1].startswith("not yet")
    assert check_predictions({}, answers)[1].startswith("not yet")
    ok, msg = check_predictions({"a": True, "b": False, "c": True}, answers)
    assert ok and "2 of 2" in msg and "not measured" in msg
    ok, msg = check_predictions({"a": True, "b": True, "c": False}, answers)
    assert not ok and "1 of 2" in msg and "not what was measured" in msg


# 07 · the 27B memory plan, against scale_up.memory's own

@pytest.fixture(scope="module")
def memory():
    from scale_up.memory import TARGET, Arch, plan
    from scale_up.settings import read_config

    return plan, Arch.from_config(TARGET), read_config()


def states_solution(params, lora_params, gpus, base_bytes):
    actor = params * base_bytes + lora_params * (4 + 4 + 4 + 4)  # frozen base; adapters: master, grad, Adam m, v
    critic = params * 16
    return (actor + critic) / gpus / 1e9


STATE_MISTAKES = {
    "not sharded": lambda P, T, W, b: (P * b + 16 * T + 16 * P) / 1e9,
    "GiB": lambda P, T, W, b: (P * b + 16 * T + 16 * P) / W / 2**30,
    "Adam states for the frozen base": lambda P, T, W, b: (16 * P + 16 * T + 16 * P) / W / 1e9,
    "the critic without its gradient": lambda P, T, W, b: (P * b + 16 * T + 4 * P) / W / 1e9,
    "the adapters at the base's bytes": lambda P, T, W, b: (P * b + b * T + 16 * P) / W / 1e9,
    "no critic": lambda P, T, W, b: (P * b + 16 * T) / W / 1e9,
    "the base always in bf16": lambda P, T, W, b: (P * 2 + 16 * T + 16 * P) / W / 1e9,
}


def test_the_states_checker(memory):
    assert check_fsdp_states(states_solution, *memory) == (True, "correct on 31 configurations (the 27B config first)")
    ok, msg = check_fsdp_states(stub, *memory)
    assert not ok and msg.startswith("not yet")
    for name, mistake in STATE_MISTAKES.items():
        ok, msg = check_fsdp_states(mistake, *memory)
        assert not ok, name
        if name != "the base always in bf16":  # right on the 27B config (bf16): caught on a variant, unnamed
            assert name in msg, (name, msg)


def kv_solution(layers, kv_heads, head_dim, params, gpu_gb, utilization, tp):
    per_gpu = utilization * gpu_gb * 1e9 - 2 * params / tp
    per_token = 2 * layers * kv_heads * head_dim * 2  # K and V, every layer, bf16
    return int(max(per_gpu, 0) * tp / per_token)


def kv_mistake(**kw):
    def fn(layers, kv_heads, head_dim, params, gpu_gb, utilization, tp):
        unit = kw.get("unit", 1e9)
        weights = 2 * params / tp / unit if kw.get("weights", True) else 0
        free = max(0.0, utilization * gpu_gb - weights) * unit * (tp if kw.get("per_replica", True) else 1)
        return free / (kw.get("k_and_v", 2) * layers * kw.get("heads", kv_heads) * head_dim * kw.get("bytes", 2))
    return fn


def test_the_kv_checker(memory):
    assert check_kv_tokens(kv_solution, *memory) == (True, "correct on 31 configurations (the 27B config first)")
    assert check_kv_tokens(lambda *a: kv_solution(*a) + 0.6, *memory)[0]  # rounding is not a mistake
    assert check_kv_tokens(stub, *memory)[1].startswith("not yet")
    for name, kw in {"KV heads": dict(heads=40), "K alone": dict(k_and_v=1), "fp32 cache": dict(bytes=4),
                     "a replica spans tp GPUs": dict(per_replica=False), "GiB": dict(unit=2**30),
                     "the weights forgotten": dict(weights=False)}.items():
        ok, msg = check_kv_tokens(kv_mistake(**kw), *memory)
        assert not ok and name in msg, (name, msg)


def test_the_plan_terms_add_up(memory):
    """Notebook 07 works each term by hand against the plan: its terms must add up to its phases."""
    plan, arch, cfg = memory
    p = plan(cfg, arch, 80)
    states = p["actor_base_gb"] + p["actor_lora_states_gb"] + p["critic_states_gb"]
    assert p["actor_states_gb"] == pytest.approx(p["actor_base_gb"] + p["actor_lora_states_gb"])
    assert p["actor_train_gb"] == pytest.approx(states + sum(p["actor_activation_terms"].values()))
    assert p["critic_train_gb"] == pytest.approx(states + p["critic_activations_gb"])
    assert p["rollout_gb"] == pytest.approx(states + p["vllm_total"])
