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
    then `rewards.compute_reward`). In a quarter of the trials the reward file is flipped, as `check_verdict` does, so
    that it disagrees with the report: such a report is invalid, and both rewards fall back to S (0 there)."""
    from ..algos.rewards import compute_reward
    from ..verify.verifier import build_report

    rng = random.Random(seed)
    for i in range(trials):
        ctrf, reward_txt = random_ctrf(rng)
        if rng.random() < 0.25:  # a reward file that disagrees with the report: no trustworthy P
            reward_txt = "1" if reward_txt == "0" else "0"
        divisor, alpha = rng.choice([3, 4.5, 6, 82]), rng.choice([0.0, 0.3, 0.5, 0.9])
        report = build_report(ctrf.encode(), reward_txt.encode())
        want = [compute_reward(k, report, divisor=divisor, alpha=alpha) for k in ("fdr", "spr")]
        try:
            got = list(fn(ctrf, reward_txt, divisor, alpha))
        except Exception as e:  # noqa: BLE001
            return False, f"not yet: {type(e).__name__}: {e}"
        if not _compare(got, want):
            state = "valid" if report.valid else f"invalid: {report.reason}"
            return False, (f"case {i}: divisor={divisor} alpha={alpha} reward.txt={reward_txt} (the report is {state})\n"
                           f"  {ctrf}\n  expected (fdr, spr) = ({want[0]:.4f}, {want[1]:.4f})\n  got {got}\n"
                           + _rewards_hint(got, report, divisor, alpha))
    return True, f"correct on {trials} random reports"


REWARD_MISTAKES = {
    "skips": "skipped tests counted as passed: P counts only the tests whose status is `passed`",
    "no_min": "no min in SPR: the shaped part is alpha * min(P / D_f, 1), so a failure stays below a success",
    "no_fallback": ("no fallback on an invalid report: when the reward file and the tests disagree (it says 1 but a "
                    "test failed, or 0 though tests passed and none failed), P cannot be trusted and both rewards are S, here 0"),
}
"""The usual mistakes in `check_rewards`' exercise, as its failure message names them."""


def _rewards_hint(got, report, divisor: float, alpha: float) -> str:
    """Which usual mistake `got` matches (the checker names it), else all of them."""
    def rewards(s: int, p: int, capped: bool = True) -> list[float]:
        shaped = p / divisor
        return [shaped, s + (1 - s) * alpha * (min(shaped, 1.0) if capped else shaped)]

    s, p = report.strict, report.passed
    says_pass = int(report.reward_file is not None and report.reward_file >= 1.0)
    found = []
    if report.valid and report.skipped and _compare(got, rewards(s, p + report.skipped)):
        found.append("skips")
    if report.valid and not s and p > divisor and _compare(got, rewards(s, p, capped=False)):
        found.append("no_min")
    if not report.valid and any(_compare(got, rewards(x, p)) for x in {s, says_pass, int(says_pass and p > 0)}):
        found.append("no_fallback")
    if found:
        return "  that is the answer with this mistake: " + "; ".join(REWARD_MISTAKES[k] for k in found)
    return "  the usual mistakes: " + "; ".join(REWARD_MISTAKES.values())


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
# ---------------------------------------------------------------- 06 · which checkpoint the loop keeps

def _eval(core: float, val: float, val_process: float, core_process: float = 0.5) -> dict:
    """An evaluation as results.json holds it, reduced to what selection could read."""
    return {"suites": {"core": {"success": core, "process_reward": core_process},
                       "val": {"success": val, "process_reward": val_process}}}


_FIVE = ["Base", "RSR-1", "RPR-1", "RSR-2", "RPR-2"]
SELECTION_CASES = [
    ("a full tie on val (success and process reward): training is what the method does, so the new one is kept",
     ["Base", "RSR-1", "RPR-1"], [_eval(0, 0, .3), _eval(.3, .2, .5), _eval(.3, .2, .5)]),
    ("val success ties and the process reward decides", ["Base", "RSR-1", "RPR-1"],
     [_eval(0, 0, .3), _eval(.3, .2, .5), _eval(.2, .2, .45)]),
    ("success first, process reward only on a tie", ["Base", "RSR-1", "RPR-1"],
     [_eval(0, 0, .3), _eval(.3, .2, .4), _eval(.2, .1, .6)]),
    ("core and val disagree: only val is looked at (core is an evaluation suite)", ["Base", "RSR-1", "RPR-1"],
     [_eval(0, 0, .3), _eval(.3, .2, .5), _eval(.4, .1, .5)]),
    ("a chain: each phase is compared with what was retained before it, not with the phase before it", _FIVE,
     [_eval(0, 0, .3), _eval(.3, .3, .5), _eval(.1, .1, .5), _eval(.2, .2, .5), _eval(.25, .25, .5)]),
    ("Base is a candidate like any other: a training phase that makes val worse is not kept", _FIVE,
     [_eval(.1, .1, .3), _eval(0, 0, .5), _eval(.2, .2, .5), _eval(.2, .2, .5), _eval(.1, .1, .5)]),
]
"""(what the case tests, stages, their evaluations): named cases the selection checker tries first, each built so
that one usual mistake (`SELECTION_MISTAKES`) fails it and the others do not."""


def _random_selection_case(rng: random.Random) -> tuple[list[str], list[dict]]:
    # few distinct values, so that ties on success and on process reward are frequent
    stages = _FIVE if rng.random() < 0.7 else _FIVE[:3]
    return stages, [_eval(rng.choice([0, 1, 2, 3]) / 9, rng.choice([0, 1, 2, 3]) / 9, rng.choice([.4, .5, .6]),
                          rng.choice([.4, .5, .6])) for _ in stages]


def _table(stages, docs) -> str:
    return "\n".join(f"    {s:6} val success {d['suites']['val']['success']:.3f} process {d['suites']['val']['process_reward']:.2f}"
                     f" | core success {d['suites']['core']['success']:.3f}" for s, d in zip(stages, docs))


def _chain(stages, evals, *, suite="val", tie_keeps_new=True, success_only=False, against_previous=False):
    """The selection rule with one of its usual mistakes switched on (the defaults are the rule itself)."""
    def key(s):
        v = evals[s]["suites"][suite]
        return (v["success"],) if success_only else (v["success"], v["process_reward"])

    kept, out = stages[0], []
    for prev, new in zip(stages, stages[1:]):
        a, b = key(prev if against_previous else kept), key(new)
        kept = new if (b >= a if tie_keeps_new else b > a) else (prev if against_previous else kept)
        out.append(kept)
    return out


SELECTION_MISTAKES = {
    "picked by core, not val (core is an evaluation suite: choosing on it makes its figures optimistic)":
        dict(suite="core"),
    "a tie kept the incoming checkpoint (the rule keeps the new one)": dict(tie_keeps_new=False),
    "val success alone (the process reward breaks a tie on success)": dict(success_only=True),
    "each phase against the phase before it, not against what was retained": dict(against_previous=True),
}
"""A usual mistake -> the `_chain` switches that make it: the checker names the one a wrong answer matches."""


def check_selection(fn, trials: int = 300, seed: int = 0) -> tuple[bool, str]:
    """`fn(stages, evals) -> list of stage names`: the stage the loop retains after each training phase.
    `stages` lists the phases in the loop's order, Base first; `evals[stage]["suites"][suite]` holds `success` and
    `process_reward` for `core` and `val`, as each stage's results.json. The reference is the loop's own rule,
    `loop.phases.retained_after` (`Loop.select` in turn). The named cases (`SELECTION_CASES`) come first, then
    random ones with many ties."""
    import copy

    from ..loop.phases import retained_after

    rng = random.Random(seed)
    cases = [(what, s, d) for what, s, d in SELECTION_CASES]
    cases += [("a random run", *_random_selection_case(rng)) for _ in range(trials)]
    for i, (what, stages, docs) in enumerate(cases):
        evals = dict(zip(stages, docs))
        want = retained_after(stages, evals)
        try:
            got = [str(x) for x in fn(list(stages), copy.deepcopy(evals))]
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if got != want:
            named = [m for m, kw in SELECTION_MISTAKES.items() if got == _chain(stages, evals, **kw)]
            hint = (f" (one entry per training phase: {len(stages) - 1} here, Base is not a training phase)"
                    if len(got) != len(want) else f"\n  that is the answer with this mistake: {named[0]}" if named
                    else "")
            return False, (f"case {i}, {what}:\n{_table(stages, docs)}\n  expected {want}\n  got      {got}{hint}")
    return True, f"correct on {len(cases)} runs ({len(SELECTION_CASES)} named cases, then random ones)"


def check_predictions(predictions: dict, answers: dict) -> tuple[bool, str]:
    """Predict-then-check: `predictions` maps a question's key to True / False (None: not yet answered);
    `answers` maps it to {"question", "answer" (True / False, or None where not measured), "figures", "source"}.
    One line per question; ok when every measured answer was predicted."""
    if not predictions or any(predictions.get(k) is None for k in answers):
        return False, "not yet: write True or False for every question first"
    lines, right, measured = [], 0, 0
    for key, a in answers.items():
        p = predictions.get(key)
        if a.get("answer") is None:
            verdict = "not measured"
        else:
            measured += 1
            right += bool(p) == a["answer"]
            verdict = "right" if bool(p) == a["answer"] else "not what was measured"
        lines.append(f"- {a['question']}\n    you: {p}; measured: {a.get('answer')} ({verdict}): {a.get('figures') or '-'}"
                     f" [{a.get('source', '')}]")
    return right == measured, f"{right} of {measured} measured answers predicted\n" + "\n".join(lines)
