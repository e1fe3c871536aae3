"""Checkers for the notebooks' exercises (Spinning Up style): your function against the reference.

Each checker returns (ok, message) and never raises, so a notebook with the stub still runs.
"""

from __future__ import annotations

import math
import random

from ..algos.advantages import reference_tb_gae


def check_tb_gae(fn, trials: int = 20, seed: int = 0) -> tuple[bool, str]:
    """`fn(rewards, values, mask, done, gamma_turn, lam_turn) -> advantages` for one sequence (plain lists)."""
    rng = random.Random(seed)
    for i in range(trials):
        n = rng.randint(3, 30)
        mask = [int(rng.random() > 0.4) for _ in range(n)]
        values = [rng.uniform(-1, 1) for _ in range(n)]
        rewards = [0.0] * n
        last = max((t for t, m in enumerate(mask) if m), default=None)
        if last is not None:
            rewards[last] = rng.choice([0.0, 0.5, 1.0])
        done, g, lam = rng.random() < 0.7, rng.uniform(0.5, 1), rng.uniform(0.5, 1)
        want = reference_tb_gae(rewards, values, mask, done, g, lam)
        try:
            got = list(fn(rewards, values, mask, done, g, lam))
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if len(got) != n or any(not math.isclose(a, b, abs_tol=1e-6) for a, b in zip(got, want)):
            return False, (f"case {i}: mask={mask} done={done} gamma={g:.3f} lambda={lam:.3f}\n"
                           f"  expected {[round(x, 4) for x in want]}\n  got      {[round(float(x), 4) for x in got]}")
    return True, f"correct on {trials} random sequences"


def _compare(got, want, tol: float = 1e-5) -> bool:
    return len(got) == len(want) and all(math.isclose(float(a), float(b), rel_tol=tol, abs_tol=tol)
                                         for a, b in zip(got, want))


def check_masked_nll(fn, trials: int = 10, seed: int = 0) -> tuple[bool, str]:
    """`fn(logits [B, T, V], input_ids [B, T], loss_mask [B, T]) -> scalar tensor`: the self-rewrite SFT loss,
    the mean negative log-likelihood of the tokens whose mask is 1 (`rsr.sft.masked_nll`)."""
    import torch

    from ..rsr.sft import masked_nll

    g = torch.Generator().manual_seed(seed)
    for i in range(trials):
        b, t, v = (int(x) for x in torch.randint(1, 5, (1,), generator=g).tolist() + [8, 11])
        logits = torch.randn(b, t, v, generator=g) * 3
        ids = torch.randint(0, v, (b, t), generator=g)
        mask = (torch.rand(b, t, generator=g) > 0.5).long()
        mask[0, 0], mask[0, -1] = 1, 1  # the first token is never predicted: its mask must not count
        want = float(masked_nll(logits, ids, mask))
        try:
            got = float(fn(logits.clone(), ids.clone(), mask.clone()))
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if not math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-5):
            hint = " (is position t's loss read from logits t - 1?)" if i == 0 else ""
            return False, f"case {i}: mask={mask.tolist()}\n  expected {want:.5f}\n  got      {got:.5f}{hint}"
    return True, f"correct on {trials} random batches"


def random_ctrf(rng: random.Random) -> tuple[str, str]:
    """A CTRF report as pytest-json-ctrf writes it, and the reward.txt beside it (1 when no test failed)."""
    import json

    statuses = rng.choices(["passed", "failed", "skipped"], weights=[6, 3, 1], k=rng.randint(1, 12))
    if rng.random() < 0.3:
        statuses = ["passed" if s == "failed" else s for s in statuses]
    tests = [{"name": f"test_check_{i}", "status": s, "duration": 1} for i, s in enumerate(statuses)]
    summary = {"tests": len(tests), **{s: statuses.count(s) for s in ("passed", "failed", "skipped")},
               "pending": 0, "other": 0}
    ok = "failed" not in statuses and "passed" in statuses
    return json.dumps({"results": {"tool": {"name": "pytest"}, "summary": summary, "tests": tests}}), "1" if ok else "0"


def check_rewards(fn, trials: int = 30, seed: int = 0) -> tuple[bool, str]:
    """`fn(ctrf_json, reward_txt, divisor, alpha) -> (fdr, spr)` from a verifier's files (the kit: `verify.build_report`
    then `rewards.compute_reward`)."""
    from ..algos.rewards import compute_reward
    from ..verify.verifier import build_report

    rng = random.Random(seed)
    for i in range(trials):
        ctrf, reward_txt = random_ctrf(rng)
        divisor, alpha = rng.choice([3, 4.5, 6, 82]), rng.choice([0.0, 0.3, 0.5, 0.9])
        report = build_report(ctrf.encode(), reward_txt.encode())
        want = [compute_reward(k, report, divisor=divisor, alpha=alpha) for k in ("fdr", "spr")]
        try:
            got = list(fn(ctrf, reward_txt, divisor, alpha))
        except Exception as e:  # noqa: BLE001
            return False, f"not yet: {type(e).__name__}: {e}"
        if not _compare(got, want):
            return False, (f"case {i}: divisor={divisor} alpha={alpha} reward.txt={reward_txt}\n  {ctrf}\n"
                           f"  expected (fdr, spr) = ({want[0]:.4f}, {want[1]:.4f})\n  got {got}")
    return True, f"correct on {trials} random reports"


def check_clipped_loss(fn, trials: int = 20, seed: int = 0) -> tuple[bool, str]:
    """`fn(logprobs, old_logprobs, advantages, mask, ratio_low, ratio_high) -> float` over one sequence's tokens
    (plain lists): the asymmetric clipped surrogate of `ppo.policy_loss`, averaged over the tokens whose mask is 1."""
    import torch

    from ..algos.ppo import policy_loss

    rng = random.Random(seed)
    for i in range(trials):
        n = rng.randint(2, 20)
        old = [rng.uniform(-4, 0) for _ in range(n)]
        new = [o + rng.gauss(0, 0.8) for o in old]
        adv = [rng.gauss(0, 1) for _ in range(n)]
        mask = [int(rng.random() > 0.3) for _ in range(n)]
        mask[rng.randrange(n)] = 1
        low, high = rng.choice([(0.8, 1.2), (0.7, 6.0), (0.5, 2.0)])
        want, _ = policy_loss(*(torch.tensor([x], dtype=torch.float64) for x in (new, old, adv, mask)), low, high)
        try:
            got = float(fn(new, old, adv, mask, low, high))
        except Exception as e:  # noqa: BLE001
            return False, f"not yet: {type(e).__name__}: {e}"
        if not math.isclose(got, float(want), rel_tol=1e-6, abs_tol=1e-6):
            return False, (f"case {i}: clip [{low}, {high}]\n  expected {float(want):.6f}\n  got      {got:.6f}"
                           " (the minimum of the clipped and unclipped terms, negated, mean over mask-1 tokens)")
    return True, f"correct on {trials} random sequences"


def check_verdict(fn, trials: int = 40, seed: int = 0) -> tuple[bool, str]:
    """`fn(ctrf_json, reward_txt) -> (S, P)`: strict success and passed checks from a verifier's two files, as the
    kit reads them (`verify.build_report`): P counts the tests whose status is `passed` (not skipped ones); S is 1
    only when the reward file says 1, no test failed and at least one passed; a report and a reward file that
    disagree are no success."""
    from ..verify.verifier import build_report

    rng = random.Random(seed)
    for i in range(trials):
        ctrf, reward_txt = random_ctrf(rng)
        if rng.random() < 0.25:  # a reward file that disagrees with the report
            reward_txt = "1" if reward_txt == "0" else "0"
        report = build_report(ctrf.encode(), reward_txt.encode())
        want = (report.strict, report.passed)
        try:
            got = tuple(int(x) for x in fn(ctrf, reward_txt))
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if got != want:
            return False, (f"case {i}: reward.txt={reward_txt}\n  {ctrf}\n  expected (S, P) = {want}"
                           f" ({report.reason or 'a consistent report'})\n  got {got}")
    return True, f"correct on {trials} random reports"


def reference_action_logprobs(logits, input_ids, action_mask, temperature: float = 1.0):
    """What `check_action_logprobs` expects, built on the library's own `policy.critic.gather_logprobs` (the
    function `token_logprobs` calls): the logits at position t predict token t + 1, so entry t + 1 is
    log softmax(z_t / T) at token t + 1; entry 0 has no prediction (0); entries whose mask is 0 are 0."""
    import torch

    from ..policy.critic import gather_logprobs

    out = torch.zeros(input_ids.shape, dtype=torch.float32)
    out[:, 1:] = gather_logprobs(logits[:, :-1], input_ids[:, 1:], temperature)
    return out * action_mask


def _action_logprobs_hint(got, logits, ids, mask, temperature) -> str:
    """Which usual mistake `got` matches, if any (the checker names it)."""
    import torch

    from ..policy.critic import gather_logprobs

    def close(x):
        return torch.allclose(got, x.float(), atol=1e-4)

    mistakes = [
        (lambda: gather_logprobs(logits, ids, temperature) * mask,
         "no shift: the logits at position t predict token t + 1, not token t"),
        (lambda: reference_action_logprobs(logits, ids, mask, 1.0),
         "no temperature: divide the logits by T before the softmax"),
        (lambda: reference_action_logprobs(logits, ids, mask, 1.0) / temperature,
         "the temperature applied after the log-softmax: log softmax(z / T) is not log softmax(z) / T"),
        (lambda: reference_action_logprobs(logits, ids, torch.ones_like(mask), temperature),
         "no mask: only the model's own tokens (action mask 1) keep a log-probability"),
        (lambda: reference_action_logprobs(logits, ids, mask, temperature).exp() * mask,
         "probabilities, not log-probabilities"),
    ]
    for build, why in mistakes:
        try:
            if close(build()):
                return f" ({why})"
        except Exception:  # noqa: BLE001 - a shape mismatch means it is not this mistake
            pass
    return ""


def check_action_logprobs(fn, trials: int = 12, seed: int = 0) -> tuple[bool, str]:
    """`fn(logits [B, T, V], input_ids [B, T], action_mask [B, T], temperature) -> [B, T]`: each action token's
    log-probability under the tempered policy given the tokens before it, 0 at position 0 and wherever the mask is 0:
    what `token_logprobs(..., temperature=T, only=mask)` computes from the model's logits, and what the rollout
    engine records for each sampled token."""
    import torch

    g = torch.Generator().manual_seed(seed)
    for i in range(trials):
        b, t, v = int(torch.randint(1, 4, (1,), generator=g)), int(torch.randint(3, 12, (1,), generator=g)), 7
        logits = torch.randn(b, t, v, generator=g) * 2
        ids = torch.randint(0, v, (b, t), generator=g)
        mask = (torch.rand(b, t, generator=g) > 0.4).long()
        mask[:, -1], mask[:, 0] = 1, 0  # a prompt token first, a generated token last
        temperature = [1.0, 0.6, 0.3, 1.5][i % 4] if i else 0.6
        want = reference_action_logprobs(logits, ids, mask, temperature)
        try:
            got = torch.as_tensor(fn(logits.clone(), ids.clone(), mask.clone(), temperature)).float()
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if got.shape != want.shape:
            return False, f"case {i}: expected shape {tuple(want.shape)}, got {tuple(got.shape)}"
        if not torch.allclose(got, want, atol=1e-5):
            hint = _action_logprobs_hint(got, logits, ids, mask, temperature)
            return False, (f"case {i}: temperature {temperature}, mask {mask[0].tolist()}\n"
                           f"  expected {[round(x, 4) for x in want[0].tolist()]}\n"
                           f"  got      {[round(x, 4) for x in got[0].tolist()]}{hint}")
    return True, f"correct on {trials} random batches (temperatures 0.3 to 1.5)"


def check_whiten(fn, trials: int = 12, seed: int = 0) -> tuple[bool, str]:
    """`fn(advantages [B, T], mask [B, T]) -> [B, T]`: the batch's advantages whitened over the entries whose mask is 1
    (`algos.ppo.masked_whiten`): minus their mean, over their standard deviation (the population one, with a small
    epsilon under the square root so that a batch of equal advantages gives 0s, never NaN), and 0 where the mask is
    0. The cases include padding that holds large numbers (they must not move the mean) and a batch whose
    advantages are all equal."""
    import torch

    from ..algos.ppo import masked_whiten

    g = torch.Generator().manual_seed(seed)
    for i in range(trials):
        b, t = int(torch.randint(2, 5, (1,), generator=g)), int(torch.randint(3, 9, (1,), generator=g))
        mask = (torch.rand(b, t, generator=g) > 0.3).long()
        mask[0, 0], mask[-1, -1] = 1, 1
        adv = torch.randn(b, t, generator=g)
        if i % 3 == 1:
            adv = torch.where(mask.bool(), adv, torch.full_like(adv, 50.0))  # padding that holds large numbers
        if i % 3 == 2:
            adv = torch.where(mask.bool(), torch.full_like(adv, -0.125), torch.randn(b, t, generator=g))  # all equal (exact in float)
        want = masked_whiten(adv, mask)
        try:
            got = torch.as_tensor(fn(adv.clone(), mask.clone())).float()
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if got.shape != want.shape:
            return False, f"case {i}: expected shape {tuple(want.shape)}, got {tuple(got.shape)}"
        if torch.allclose(got, want, atol=1e-4):
            continue
        why = ""
        if not torch.isfinite(got).all():
            why = " (NaN or inf: all the advantages are equal here, so the std is 0; add eps under the square root)"
        elif (got[mask == 0] != 0).any():
            why = " (entries whose mask is 0 must be 0)"
        else:
            on = mask.bool()
            x = adv[on]
            unbiased = (x - x.mean()) / (x.var(unbiased=True) + 1e-8).sqrt()
            whole = (adv - adv.mean()) / (adv.var(unbiased=False) + 1e-8).sqrt()
            if torch.allclose(got[on], whole[on], atol=1e-4) or i % 3 == 1:
                why = " (the padding moved your mean or std: take both over the mask-1 entries only)"
            elif torch.allclose(got[on], unbiased, atol=1e-4):
                why = " (the population standard deviation, dividing by n, not n - 1)"
        return False, (f"case {i}: mask {mask.tolist()}\n  expected {[round(x, 3) for x in want[0].tolist()]}\n"
                       f"  got      {[round(x, 3) for x in got[0].tolist()]}{why}")
    return True, f"correct on {trials} random batches (padding and equal advantages among them)"
