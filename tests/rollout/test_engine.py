"""The rollout engine: token bookkeeping, batching equivalence, context budget, records.

Mechanics run on a tiny random Llama (fast); the batching-equivalence check runs the
bundled model in fp32 with greedy decoding.  Run: pytest tests/rollout/test_engine.py
"""

import time

import pytest
import torch

from rsi_lite.policy.model import Policy, PolicyConfig, load_policy, prepare_model
from rsi_lite.rollout.engine import RolloutConfig, run_episodes
from rsi_lite.rollout.trajectory import Trajectory, read_trajectories, write_trajectories
from rsi_lite.tasks import find_tasks

from ..conftest import TASKS


@pytest.fixture(scope="module")
def tiny_policy():
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tok = AutoTokenizer.from_pretrained(str(prepare_model()))
    tok.pad_token, tok.padding_side = tok.eos_token, "left"
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096)
    return Policy(LlamaForCausalLM(cfg).eval(), tok, PolicyConfig(quantization="full"))


@pytest.fixture(scope="module")
def core():
    return find_tasks(TASKS / "core")


def _check_record(t: Trajectory, tok):
    n = len(t.token_ids)
    assert len(t.action_mask) == len(t.logprobs) == n == t.tokens["total"]
    in_span = [0] * n
    for a, b in t.turn_spans:
        in_span[a:b] = [1] * (b - a)
    assert in_span == t.action_mask  # the mask is exactly the model's own tokens
    assert all(lp == 0.0 for lp, m in zip(t.logprobs, t.action_mask) if not m)
    assert all(lp <= 0.0 for lp in t.logprobs)
    assert len(t.turn_spans) == sum(m["kind"] == "action" for m in t.messages) == t.turns
    # every action's tokens decode to the action message's text (stored ids, not re-tokenized text)
    actions = [m["content"] for m in t.messages if m["kind"] == "action"]
    for (a, b), text in zip(t.turn_spans, actions):
        assert tok.decode(t.token_ids[a:b], skip_special_tokens=True, clean_up_tokenization_spaces=False).startswith(text[:20])
    assert {"s", "fdr", "spr"} == set(t.rewards) and "strict" in t.verifier


@pytest.mark.parametrize("harness", ["plain", "exemplar", "state_machine", "verifier_feedback"])
def test_records_are_consistent_under_every_harness(tiny_policy, core, harness, bwrap_ok):
    cfg = RolloutConfig(harness=harness, max_turns=2, max_new_tokens=12, temperature=1.0,
                        batch_size=2)  # 3 jobs, 2 places: the third episode waits for a free one
    trajs = run_episodes(tiny_policy, [(core[0], 0), (core[5], 1), (core[9], 2)], cfg)
    assert [t.task for t in trajs] == [core[0].name, core[5].name, core[9].name]
    for t in trajs:
        _check_record(t, tiny_policy.tokenizer)
        assert t.harness == harness and t.finish_reason in ("max_turns", "complete", "verified")


def test_the_continuous_engine_fills_its_decode_slots_and_keeps_its_sandboxes_within_bounds(tiny_policy, core, bwrap_ok,
                                                                                            monkeypatch):
    """At most `batch_size` replies decode at once and at most `open_episodes` sandboxes are open, and both
    limits are reached: episodes are opened ahead so that a slot freed by a reply is refilled at once."""
    import threading

    from rsi_lite.rollout import engine as rollout

    seen = {"busy": 0, "open": 0, "max_open": 0}
    lock = threading.Lock()
    real_make, real_open = rollout.make_generator, rollout._open_episode

    def make(*a, **k):
        g = real_make(*a, **k)
        submit = g.submit

        def counted(key, ids):
            submit(key, ids)
            seen["busy"] = max(seen["busy"], g.busy)
        g.submit = counted
        return g

    def open_episode(*a, **k):
        e = real_open(*a, **k)
        with lock:
            seen["open"] += 1
            seen["max_open"] = max(seen["max_open"], seen["open"])
        close, closed = e.sandbox.close, []

        def counted_close():  # close() may be called again (it is idempotent): count the first
            with lock:
                seen["open"] -= 0 if closed else 1
                closed.append(1)
            close()
        e.sandbox.close = counted_close
        return e

    monkeypatch.setattr(rollout, "make_generator", make)
    monkeypatch.setattr(rollout, "_open_episode", open_episode)
    cfg = RolloutConfig(max_turns=2, max_new_tokens=8, temperature=1.0, batch_size=2, open_episodes=3)
    trajs = run_episodes(tiny_policy, [(core[i], i) for i in range(6)], cfg)
    assert [t.task for t in trajs] == [core[i].name for i in range(6)]
    assert seen["busy"] == 2 and seen["max_open"] == 3 and seen["open"] == 0, seen


def test_of_the_ready_prompts_the_episode_with_the_fewest_turns_taken_speaks_first():
    from rsi_lite.rollout.engine import ReadyQueue

    q = ReadyQueue()
    for episode, turns in [(0, 1), (1, 0), (2, 2), (3, 1), (4, 0)]:
        q.push(episode, turns)
    assert len(q) == 5
    assert [q.pop() for _ in range(3)] == [1, 4, 0]  # fewest turns, then the first ready
    q.push(5, 0)  # a late episode's first turn goes before the older ones' later turns
    assert [q.pop() for _ in range(len(q))] == [5, 3, 2]
    assert not q


@pytest.mark.parametrize("page", [64, 16])
def test_a_later_turn_reuses_the_cached_blocks_of_its_episodes_earlier_turns(tiny_policy, core, bwrap_ok, monkeypatch,
                                                                              page):
    """Each turn's prompt is the last prompt + reply + new observation. The continuous engine keeps the cache
    blocks of a finished (or cancelled) reply, so a later turn computes only its new tokens and the last
    partial page: every full page of the episode's previous prompt is found in the cache."""
    from transformers.generation.continuous_batching.cache import PagedAttentionCache

    from rsi_lite.rollout import engine as rollout

    matches, owner = [], {}
    search = PagedAttentionCache.search_prefix_match

    def spy(self, rid, prompt_ids):
        n = search(self, rid, prompt_ids)
        matches.append((rid, len(prompt_ids), n))
        return n
    real_make = rollout.make_generator

    def make(*a, **k):
        g = real_make(*a, **k)
        new = g._replies.new

        def keyed(key):
            rid = new(key)
            owner[rid] = key
            return rid
        g._replies.new = keyed
        return g

    monkeypatch.setattr(PagedAttentionCache, "search_prefix_match", spy)
    monkeypatch.setattr(rollout, "make_generator", make)
    cfg = RolloutConfig(harness="exemplar", max_turns=3, max_new_tokens=8, temperature=1.0, batch_size=2,
                        page_size=page, generation_backend="transformers")
    run_episodes(tiny_policy, [(core[i], i) for i in range(3)], cfg)
    last, later = {}, 0
    for rid, n, matched in matches:
        key = owner[rid]
        if key in last:
            later += 1
            assert matched >= last[key] // page * page, (key, last[key], n, matched)
        last[key] = n
    assert later >= 3


def test_jsonl_roundtrip(tiny_policy, core, tmp_path, bwrap_ok):
    trajs = run_episodes(tiny_policy, [(core[0], 0)], RolloutConfig(max_turns=1, max_new_tokens=8))
    # what the logprobs are of: the backend that served them and the sampling settings (RPR's rollout correction)
    assert trajs[0].sampler == {"backend": "native", "temperature": 0.6, "top_p": 1.0}
    write_trajectories(trajs, tmp_path / "t.jsonl")
    assert read_trajectories(tmp_path / "t.jsonl")[0] == trajs[0]
    (tmp_path / "bad.jsonl").write_text('{"task": 1}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        read_trajectories(tmp_path / "bad.jsonl")


def test_context_budget_cuts_old_observations_then_stops(tiny_policy, core, bwrap_ok):
    cfg = RolloutConfig(max_turns=6, max_new_tokens=16, context_budget=330, temperature=1.0)
    t = run_episodes(tiny_policy, [(core[0], 0)], cfg)[0]
    assert t.context_cuts > 0 or t.finish_reason == "context"
    _check_record(t, tiny_policy.tokenizer)


def test_unknown_engine_is_an_error(tiny_policy, core):
    with pytest.raises(ValueError, match="RolloutConfig.engine"):
        run_episodes(tiny_policy, [(core[0], 0)], RolloutConfig(engine="warp"))


def test_the_retired_lockstep_engine_is_an_error_naming_the_field_and_old_configs_still_load():
    """Run directories written while there were two engines hold `"engine": "continuous"` in their config.json."""
    from rsi_lite.rsr.config import RSRConfig

    old = {**RolloutConfig().to_dict(), "engine": "continuous"}
    assert RolloutConfig(**old) == RolloutConfig()
    assert RSRConfig.from_dict({"rollout": old}).rollout == RolloutConfig()
    with pytest.raises(ValueError, match=r"RolloutConfig.engine: 'lockstep'.*retired"):
        RolloutConfig(**{**old, "engine": "lockstep"})


def test_batched_and_one_at_a_time_greedy_rollouts_choose_the_same_actions(core, bwrap_ok):
    """Under greedy decoding the continuous engine's replies are plain `generate`'s: at batch 4 and at batch 1,
    and each stored action is what `generate_batch` (one prompt, no padding, no cache shared) replies to the
    stored tokens before it, so neither scheduling, prefix sharing nor cutting at the closed block changes them."""
    from rsi_lite.policy.gen.hf_generate import generate_batch
    from rsi_lite.rollout.engine import BLOCK_CLOSED
    from rsi_lite.rollout.trajectory import stop_token_ids

    pol = load_policy(PolicyConfig(quantization="lora"))  # fp32; a fresh LoRA adapter is the identity
    jobs = [(core[i], 0) for i in (0, 6, 12, 20)]
    cfg = RolloutConfig(max_turns=2, max_new_tokens=24, temperature=0.0, batch_size=4, generation_backend="transformers")
    runs = {"continuous batch 4": run_episodes(pol, jobs, cfg),
            "continuous batch 1": run_episodes(pol, jobs, RolloutConfig(**{**cfg.to_dict(), "batch_size": 1}))}
    stop = sorted(stop_token_ids(pol.tokenizer))
    runs["generate one at a time"] = [
        [generate_batch(pol.model, pol.tokenizer, [t.token_ids[:a]], max_new_tokens=cfg.max_new_tokens, temperature=0.0,
                        stop_ids=stop, stop_pattern=BLOCK_CLOSED)[0].token_ids for a, _ in t.turn_spans]
        for t in runs["continuous batch 4"]]
    assert all(t.context_cuts == 0 for t in runs["continuous batch 4"])  # so the stored tokens are each turn's prompt
    actions = lambda t: [t.token_ids[a:b] for a, b in t.turn_spans]  # noqa: E731
    ref = [actions(t) for t in runs["continuous batch 1"]]
    total = sum(map(len, ref))
    for name in ("continuous batch 4", "generate one at a time"):
        got = [r if name.startswith("generate") else actions(r) for r in runs[name]]
        differ = sum(a != b for x, y in zip(got, ref) for a, b in zip(x, y))
        print(f"greedy actions that differed between {name} and continuous batch 1: {differ} of {total}")
        assert differ <= 1  # rare numerical ties aside, padding, batching and scheduling change nothing


class _FakeVLLMEngine:
    """vLLM's `LLMEngine` surface as `VLLMGenerator` uses it (`add_request`, `step`, `abort_request`,
    `has_unfinished_requests`): each step appends one token of a scripted reply to every live request,
    the first reply of an episode if the prompt does not yet hold it, else the second.
    An aborted request still sends one late update, as a real engine can for a step already under way."""

    def __init__(self, first: list[int], second: list[int]):
        self.first, self.second = first, second
        self.live: dict[str, dict] = {}
        self.aborted: list[str] = []

    def add_request(self, rid, prompt, params, lora_request=None):
        ids, n = prompt["prompt_token_ids"], len(self.first)
        assert ids and params.logprobs == 0
        seen = any(ids[i:i + n] == self.first for i in range(len(ids) - n + 1))
        self.live[rid] = {"script": self.second if seen else self.first + [9] * 8, "out": [], "params": params}

    def abort_request(self, rids):
        for rid in rids:
            self.aborted.append(rid)
            self.live[rid]["aborted"] = True

    def has_unfinished_requests(self):
        return bool(self.live)

    def step(self):
        from types import SimpleNamespace as NS

        outs = []
        for rid, r in list(self.live.items()):
            if not r.get("aborted"):
                r["out"].append(r["script"][len(r["out"])])
            toks = list(r["out"])
            done = (r.get("aborted") or toks[-1] in r["params"].stop_token_ids
                    or len(toks) >= min(r["params"].max_tokens, len(r["script"])))
            outs.append(NS(request_id=rid, finished=bool(done) and not r.get("aborted"),
                           outputs=[NS(token_ids=toks, logprobs=[{t: NS(logprob=-0.5)} for t in toks])]))
            if done:
                del self.live[rid]
        return outs


def test_the_vllm_generator_serves_the_rollout_engine(tiny_policy, core, monkeypatch, bwrap_ok):
    """A policy served by vLLM runs through the same continuous engine: replies keyed to their episodes,
    a reply cut once its code block closes (and the request aborted; its late update ignored), a stop
    token ending a reply, the engine's log-probabilities stored on the action tokens."""
    from types import SimpleNamespace as NS

    from rsi_lite.policy.gen import vllm_engine as vllm_backend

    monkeypatch.setattr(vllm_backend, "_vllm", lambda: NS(SamplingParams=lambda **kw: NS(**kw)))
    tok = tiny_policy.tokenizer
    block = tok.encode("```bash\nls\n```", add_special_tokens=False)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    engine = _FakeVLLMEngine(block, tok.encode("I am done.", add_special_tokens=False) + [im_end])
    pol = vllm_backend.VLLMPolicy(tokenizer=tok, engine=engine)
    cfg = RolloutConfig(max_turns=2, max_new_tokens=40, temperature=0.0, batch_size=2)
    trajs = run_episodes(pol, [(core[0], 0), (core[5], 1), (core[9], 2)], cfg)
    assert [t.task for t in trajs] == [core[0].name, core[5].name, core[9].name]
    assert not engine.live and len(engine.aborted) == 3  # each first reply, cut at its block
    assert any(t.turns == 2 for t in trajs)
    for t in trajs:
        _check_record(t, tok)
        a, b = t.turn_spans[0]
        assert t.token_ids[a:b] == block  # cut at the closed block, nothing after it
        if t.turns == 2:  # the second reply ends with its stop token, kept in the record
            a, b = t.turn_spans[1]
            assert t.token_ids[b - 1] == im_end
        assert all(lp == -0.5 for lp, m in zip(t.logprobs, t.action_mask) if m)
        assert t.sampler == {"backend": "vllm", "temperature": 0.0, "top_p": 1.0}


def test_a_sandbox_that_dies_mid_episode_ends_that_episode_failed_not_the_run(tiny_policy, core, bwrap_ok):
    """A sandbox that dies mid-episode (an evaluation met one: a command had killed its shell loop) ends that
    episode with reason 'sandbox' and a failing report that says why, instead of an error that would stop
    every other episode of the run. Here the sandbox's init process is killed from outside."""
    import os
    import signal
    import time

    from rsi_lite.harness.messages import Message
    from rsi_lite.rollout.engine import _act, _final_verify, _open_episode, _trajectory
    from rsi_lite.sandbox import SandboxError, SandboxLimits

    cfg, limits = RolloutConfig(max_turns=3), SandboxLimits(command_timeout=10)
    e = _open_episode((core[0], 0), cfg, tiny_policy.tokenizer, limits)
    os.kill(e.sandbox._init_pid, signal.SIGKILL)
    for _ in range(100):
        if not os.path.exists(f"/proc/{e.sandbox._init_pid}/root/run"):
            break
        time.sleep(0.02)
    with pytest.raises(SandboxError):
        e.sandbox.exec("echo alive", timeout=5)
    e.messages.append(Message("action", "```bash\nls\n```"))
    assert _act(e, limits) == []
    assert e.state.done and e.state.finish_reason == "sandbox"
    _final_verify(e, limits)
    t = _trajectory(e, cfg, "base", {}, 1.0)
    assert t.finish_reason == "sandbox" and t.verifier["strict"] == 0 and not t.verifier["valid"]
    assert t.verifier["reason"].startswith("sandbox lost:") and t.rewards["s"] == 0


def test_a_rollout_says_where_its_wall_went(tiny_policy, core, bwrap_ok):
    from rsi_lite.timing import CLOCK, WALL_PHASES

    CLOCK.reset()
    t0 = time.perf_counter()
    trajs = run_episodes(tiny_policy, [(core[i], 0) for i in range(4)],
                         RolloutConfig(max_turns=2, max_new_tokens=8, batch_size=2))
    wall = time.perf_counter() - t0
    b = CLOCK.snapshot(wall)
    phases = b.get("rollout/generating", 0) + b.get("rollout/waiting", 0)
    assert 0 < phases <= wall + 0.1 and b["rollout/generating"] > 0
    assert 0 < b["rollout/forward"] <= b["rollout/generating"] + 0.1  # the forwards happen while replies decode
    assert b["rollout/decode_tokens"] + b["rollout/prefill_tokens"] >= sum(t.tokens["generated"] for t in trajs)
    assert b["sandbox/open"] > 0 and b["sandbox/verifier"] > 0
    assert b["other"] == pytest.approx(max(0.0, wall - sum(b.get(k, 0) for k in WALL_PHASES)), abs=0.2)


def test_with_verify_turns_every_action_gets_its_verdict_and_the_shaped_rewards_add_up(tiny_policy, core, bwrap_ok):
    """The copy task: the first action solves it, the second breaks it, the third runs nothing. Each action's
    verdict is recorded (the third repeats the second's: nothing changed), the last one is the episode's, and
    the per-turn rewards, as `turn_reward_deltas` spreads them, sum to the episode's reward."""
    from rsi_lite.harness.messages import Message
    from rsi_lite.rollout.engine import _act, _final_verify, _open_episode, _trajectory
    from rsi_lite.rpr.targets import batch_tensors, turn_reward_deltas
    from rsi_lite.sandbox import SandboxLimits

    task = next(t for t in core if t.name == "core-000-file_ops-easy")
    cfg, limits = RolloutConfig(max_turns=3, verify_turns=True), SandboxLimits(command_timeout=10)
    e = _open_episode((task, 0), cfg, tiny_policy.tokenizer, limits)
    stop = {tiny_policy.tokenizer.eos_token_id}
    for reply in ("```bash\ncp robin_coral.txt flint_prism.txt\n```", "```bash\nrm flint_prism.txt\n```",
                  "I am done."):
        ids = tiny_policy.tokenizer.encode(reply)
        e.messages.append(Message("action", e.stream.add_action(ids, [0.0] * len(ids), stop)))
        new = _act(e, limits)
        e.stream.add_messages(new)
        e.messages += new
    assert [r.strict for r in e.turn_reports] == [1, 0, 0] and e.turn_reports[2] is e.turn_reports[1]
    _final_verify(e, limits)
    t = _trajectory(e, cfg, "base", {}, 1.0)
    assert t.verifier["strict"] == 0 and [v["strict"] for v in t.turn_verdicts] == [1, 0, 0]
    assert t.turn_rewards["s"] == [1.0, 0.0, 0.0] and turn_reward_deltas(t.turn_rewards["s"]) == [1.0, -1.0, 0.0]
    assert len(t.turn_spans) == 3
    _, _, mask, _, r = batch_tensors([t], "spr", 0, "turn")
    ends = [end - 1 for _, end in t.turn_spans]
    assert float(r.sum()) == pytest.approx(t.rewards["spr"]) and r[0, ends[0]] > 0 > r[0, ends[1]]
    assert float(r[0].abs().sum()) == pytest.approx(float(r[0, ends].abs().sum()))  # only on the turns' last tokens
    _, _, _, _, final = batch_tensors([t], "spr", 0)
    assert float(final[0, ends[-1]]) == pytest.approx(t.rewards["spr"]) and float(final.sum()) == float(final[0, ends[-1]])
    assert Trajectory.from_json(t.to_json()).turn_rewards == t.turn_rewards


def test_a_workspace_the_episode_verified_before_is_not_verified_again(tiny_policy, core, bwrap_ok):
    """Turn verdicts with the episode's memo: copy (solves), cat (reads only), rm (breaks), copy again (the first
    workspace back, with new file times). The tests run twice, once per distinct workspace; the other two
    verdicts come from the memo and equal what the tests say on that workspace."""
    from rsi_lite.harness.messages import Message
    from rsi_lite.rollout.engine import _act, _final_verify, _open_episode, _trajectory
    from rsi_lite.sandbox import SandboxLimits
    from rsi_lite.verify.verifier import verify_sandbox

    task = next(t for t in core if t.name == "core-000-file_ops-easy")
    cfg, limits = RolloutConfig(max_turns=4, verify_turns=True), SandboxLimits(command_timeout=10)
    e = _open_episode((task, 0), cfg, tiny_policy.tokenizer, limits)
    stop = {tiny_policy.tokenizer.eos_token_id}
    for cmd in ("cp robin_coral.txt flint_prism.txt", "cat flint_prism.txt", "rm flint_prism.txt",
                "cp robin_coral.txt flint_prism.txt"):
        ids = tiny_policy.tokenizer.encode(f"```bash\n{cmd}\n```")
        e.messages.append(Message("action", e.stream.add_action(ids, [0.0] * len(ids), stop)))
        new = _act(e, limits)
        e.stream.add_messages(new)
        e.messages += new
    assert [r.strict for r in e.turn_reports] == [1, 1, 0, 1]
    assert e.verdicts["hits"] == 2 and len([k for k in e.verdicts if k != "hits"]) == 2
    again = verify_sandbox(e.sandbox, task, limits=limits)  # no memo: the tests themselves
    assert (again.strict, again.passed, again.total) == (1, e.turn_reports[3].passed, e.turn_reports[3].total)
    _final_verify(e, limits)
    t = _trajectory(e, cfg, "base", {}, 1.0)
    assert t.timings["verifier_reused"] == 2 and [v["strict"] for v in t.turn_verdicts] == [1, 1, 0, 1]
