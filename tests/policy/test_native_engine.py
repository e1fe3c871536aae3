"""The native engine (`rsi_lite.policy.gen.native_engine`): the same replies as the transformers engine, each
episode's cache kept between turns, prefixes shared across episodes, slots freed, sampling as recorded.

Mechanics on a small random Llama with a LoRA adapter made non-trivial; greedy identity with the transformers
engine on the bundled model. Run: pytest tests/policy/test_native_engine.py
"""

import pytest
import torch

from rsi_lite.policy.gen.dispatch import make_generator, resolve_backend
from rsi_lite.policy.gen.native_engine import NativeGenerator, sample_rows, supports
from rsi_lite.policy.gen.types import common_prefix
from rsi_lite.policy.model import PolicyConfig, load_policy


@pytest.fixture(scope="module")
def policy(small_random_model):
    """A random two-layer Llama whose LoRA adapter is not zero: the engine must add each adapter's delta."""
    pol = load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))
    torch.manual_seed(1)
    with torch.no_grad():
        for name, p in pol.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05)
    return pol


def _chat(tok, text: str) -> list[int]:
    ids = tok.apply_chat_template([{"role": "system", "content": "You are a shell agent."},
                                   {"role": "user", "content": text}], add_generation_prompt=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def _drain(gen, prompts: dict) -> dict:
    for key, p in prompts.items():
        gen.submit(key, p)
    out = {}
    while gen.busy:
        out.update(dict(gen.poll(timeout=0.5)))
    return out


def _native(policy, **kw) -> NativeGenerator:
    return make_generator(policy, "native", **{"max_new_tokens": 12, "temperature": 0.0, "stop_ids": [-1], **kw})


def test_auto_picks_native_for_a_llama_and_transformers_for_what_it_does_not_serve(policy):
    assert supports(policy.model) and resolve_backend(policy, "auto") == "native"

    class Other(torch.nn.Module):
        pass
    other = type(policy)(Other(), policy.tokenizer, policy.config)
    assert not supports(other.model) and resolve_backend(other, "auto") == "transformers"
    with pytest.raises(ValueError, match="not Llama-style"):
        NativeGenerator(other.model, policy.tokenizer, max_new_tokens=4)


def test_greedy_replies_and_logprobs_equal_the_transformers_engine(policy):
    tok = policy.tokenizer
    prompts = {i: _chat(tok, text) for i, text in enumerate(
        ["List the files.", "Make a directory called out and write hello into out/a.txt, then show it.", "pwd"])}
    with _native(policy) as gen:
        native = _drain(gen, prompts)
    with make_generator(policy, "transformers", max_new_tokens=12, temperature=0.0, stop_ids=[-1]) as gen:
        ref = _drain(gen, prompts)
    for i in prompts:
        assert native[i].token_ids == ref[i].token_ids
        assert native[i].logprobs == pytest.approx(ref[i].logprobs, abs=1e-4)
        assert len(native[i].token_ids) == 12 and native[i].finish_reason == "length"


def test_a_later_turn_computes_only_the_tokens_after_what_its_slot_holds(policy):
    """The slot holds the prompt and the reply but its last token (sampled, never fed): the next prompt (prompt +
    reply + observation) prefills exactly the observation and that token, and gets the reply a fresh engine gives
    to the whole prompt."""
    tok = policy.tokenizer
    first = _chat(tok, "Count the lines of notes.txt.")
    with _native(policy) as gen:
        reply = _drain(gen, {"ep": first})["ep"].token_ids
        observation = tok.encode("\n3 notes.txt\n", add_special_tokens=False)
        second = first + reply + observation
        before = gen.forward_stats()["prefill_tokens"]
        again = _drain(gen, {"ep": second})["ep"]
        assert gen.forward_stats()["prefill_tokens"] - before == len(observation) + 1
    with _native(policy) as fresh:
        assert _drain(fresh, {"x": second})["x"].token_ids == again.token_ids


def test_a_new_episode_starts_from_the_longest_prefix_any_slot_holds(policy):
    tok = policy.tokenizer
    a, b = _chat(tok, "Show the date."), _chat(tok, "Show the kernel version.")
    shared = len(common_prefix([a, b]))
    assert 10 < shared < min(len(a), len(b))  # the system prompt and the chat scaffolding
    with _native(policy) as gen:
        _drain(gen, {"a": a})
        before = gen.forward_stats()["prefill_tokens"]
        got = _drain(gen, {"b": b})["b"]
        assert gen.forward_stats()["prefill_tokens"] - before == len(b) - shared
    with _native(policy) as fresh:
        assert _drain(fresh, {"b": b})["b"].token_ids == got.token_ids


def test_slots_are_released_reused_and_never_taken_from_a_reply_in_flight(policy):
    tok = policy.tokenizer
    prompts = [_chat(tok, f"Task number {i}.") for i in range(4)]
    with _native(policy, max_concurrent=2, cache_slots=2) as gen:
        _drain(gen, {0: prompts[0], 1: prompts[1]})
        gen.release(0)
        _drain(gen, {2: prompts[2]})  # the freed slot
        _drain(gen, {3: prompts[3]})  # no free slot: the longest-idle key (1) gives up its slot
        assert set(gen.slot_of) == {2, 3}
        gen.submit(4, prompts[0])
        gen.submit(5, prompts[1])
        with pytest.raises(RuntimeError, match="cache slots are in flight"):
            gen.submit(6, prompts[2])


def test_a_prompt_longer_than_a_slot_is_a_clear_error(policy):
    with _native(policy, context_budget=16) as gen, pytest.raises(ValueError, match="context_budget"):
        gen.submit(0, list(range(20)))


@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.6, 1.0), (1.0, 0.7), (0.0, 1.0)])
def test_recorded_logprobs_are_those_of_the_distribution_sampled_from(temperature, top_p):
    torch.manual_seed(0)
    logits = torch.randn(64, 50) * 3
    tokens, lps = sample_rows(logits, temperature, top_p, torch.Generator().manual_seed(0))
    for row, tok, lp in zip(logits, tokens.tolist(), lps.tolist()):
        if temperature == 0:
            assert tok == int(row.argmax()) and lp == pytest.approx(float(torch.log_softmax(row, -1)[tok]), abs=1e-6)
            continue
        p = torch.softmax(row / temperature, -1)
        order = torch.argsort(p, descending=True)
        keep = order[:int((torch.cumsum(p[order], 0) < top_p).sum()) + 1]
        assert tok in keep.tolist()  # top-p's nucleus only
        assert lp == pytest.approx(float((p[tok] / p[keep].sum()).log()), abs=1e-5)


def test_the_k_samples_of_one_prompt_are_drawn_independently(policy):
    """Evaluation runs k episodes of a task and PPO's groups k rollouts of it: identical prompts must not get
    identical samples."""
    prompt = _chat(policy.tokenizer, "Write hello into a.txt.")
    with _native(policy, temperature=1.0, max_concurrent=6) as gen:
        replies = _drain(gen, {k: prompt for k in range(6)})
    assert len({tuple(r.token_ids) for r in replies.values()}) >= 5


def test_greedy_episodes_on_the_bundled_model_equal_the_transformers_engine(bwrap_ok):
    """The bundled model in fp32 as the kit trains it, plain harness, greedy, two turns: every action the same on
    both engines (what `python -m rsi_lite.bench.rollout` checks on 80 episodes)."""
    from rsi_lite.paths import TASKS_ROOT
    from rsi_lite.rollout.engine import RolloutConfig, run_episodes
    from rsi_lite.tasks import find_tasks

    pol = load_policy(PolicyConfig(quantization="lora"))
    tasks = find_tasks(TASKS_ROOT / "core")
    jobs = [(tasks[i], 0) for i in (0, 6, 12, 20)]
    runs = {b: run_episodes(pol, jobs, RolloutConfig(max_turns=2, max_new_tokens=32, temperature=0.0, batch_size=4,
                                                     generation_backend=b))
            for b in ("native", "transformers")}
    for a, b in zip(runs["native"], runs["transformers"]):
        assert a.token_ids == b.token_ids and a.sampler["backend"] == "native"
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-3


def test_a_changed_adapter_is_served_by_the_next_generator_and_an_unchanged_one_is_not_repacked(policy):
    """The adapters are merged into packed weights when a generator opens: after an in-place update (what an
    optimizer step does) the next generator must serve the new actor, and with nothing changed it must reuse the
    packed weights."""
    tok = policy.tokenizer
    prompts = {0: _chat(tok, "List the files."), 1: _chat(tok, "pwd")}
    with _native(policy) as gen:
        before = _drain(gen, prompts)
    with _native(policy) as gen:
        assert gen.stats["pack_s"] == 0.0  # nothing changed: no repack
    lora_b = [p for name, p in policy.model.named_parameters() if "lora_B" in name]
    saved = [p.detach().clone() for p in lora_b]
    try:
        with torch.no_grad():
            for p in lora_b:
                p.add_(torch.randn_like(p) * 0.2)
        with _native(policy) as gen:
            after = _drain(gen, prompts)
            assert gen.stats["pack_s"] > 0.0
        with make_generator(policy, "transformers", max_new_tokens=12, temperature=0.0, stop_ids=[-1]) as gen:
            ref = _drain(gen, prompts)
        assert any(after[i].logprobs != before[i].logprobs for i in prompts)
        for i in prompts:
            assert after[i].token_ids == ref[i].token_ids
            assert after[i].logprobs == pytest.approx(ref[i].logprobs, abs=1e-4)
    finally:
        with torch.no_grad():
            for p, s in zip(lora_b, saved):
                p.copy_(s)
