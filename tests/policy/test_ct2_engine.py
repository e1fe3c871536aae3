"""The CTranslate2 generation backend: its interface, weights that follow the actor, agreement with transformers.

Skipped where the ctranslate2 package is not installed (`pip install -e '.[fast]'`), except the checks of
what happens without it. Run: pytest tests/policy/test_ct2_engine.py
"""

import pytest
import torch

from rsi_lite.policy.gen import ct2_engine as ct2_backend
from rsi_lite.policy.gen import ct2_weights
from rsi_lite.policy.gen.ct2_engine import common_prefix, length_groups, processed_logprob
from rsi_lite.policy.gen.dispatch import make_generator, resolve_backend
from rsi_lite.policy.gen.hf_generate import generate_batch
from rsi_lite.policy.model import PolicyConfig, load_policy

needs_ct2 = pytest.mark.skipif(not ct2_backend.available(), reason="ctranslate2 is not installed (.[fast])")


@pytest.fixture
def ct2_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(ct2_weights, "cache_dir", lambda: tmp_path / "ct2")
    monkeypatch.setattr(ct2_weights._Served, "key", None)
    return tmp_path / "ct2"


@pytest.fixture(scope="module")
def random_lora(small_random_model):
    return load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))


def _chat(tok, text):
    ids = tok.apply_chat_template([{"role": "system", "content": "You are a shell agent."},
                                   {"role": "user", "content": text}], add_generation_prompt=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def _drain(gen, prompts):
    out = {}
    with gen:
        for i, p in enumerate(prompts):
            gen.submit(i, p)
        while gen.busy:
            out.update(dict(gen.poll(timeout=0.5)))
    return [out[i] for i in range(len(prompts))]


def test_common_prefix_and_length_groups():
    assert common_prefix([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == [1, 2]
    assert common_prefix([[7, 8]]) == [7, 8]
    assert length_groups([30, 5, 8, 40, 31], 4) == [[1, 2], [0, 4], [3]]
    assert length_groups([3, 3, 3], 0) == [[0, 1, 2]]


@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.6, 1.0), (0.7, 0.9)])
def test_processed_logprob_is_the_log_probability_the_sampler_drew_from(temperature, top_p):
    torch.manual_seed(0)
    z = torch.randn(50) * 3
    p = torch.softmax(z / temperature, -1)
    order = torch.argsort(p, descending=True)
    keep = order[:int((torch.cumsum(p[order], 0) < top_p).sum()) + 1]
    q = torch.zeros_like(p)
    q[keep] = p[keep] / p[keep].sum()
    for token in keep[:5].tolist():
        assert processed_logprob(z.numpy(), token, temperature, top_p) == pytest.approx(float(q[token].log()), abs=1e-5)


def test_without_the_package_auto_falls_back_and_asking_for_it_says_what_to_install(random_lora, monkeypatch):
    def missing():
        raise RuntimeError("the ctranslate2 generation backend needs the ctranslate2 package: pip install -e '.[fast]'")

    monkeypatch.setattr(ct2_backend, "_ct2", missing)
    monkeypatch.setattr(ct2_weights, "_ct2", missing)
    assert resolve_backend(random_lora, "auto") == "native"  # auto never needs it
    with pytest.raises(RuntimeError, match=r"pip install -e '\.\[fast\]'"):
        make_generator(random_lora, "ctranslate2", max_new_tokens=4)
    with pytest.raises(ValueError, match="generation_backend: 'warp'"):
        resolve_backend(random_lora, "warp")
    with pytest.raises(ValueError, match="VLLMPolicy"):
        resolve_backend(random_lora, "vllm")


@needs_ct2
def test_the_generator_returns_every_key_once_with_the_shared_prefix_computed_once(random_lora, ct2_cache):
    tok = random_lora.tokenizer
    prompts = [_chat(tok, t) for t in ("list files", "count the lines of a.txt please", "make a dir", "hi")]
    gen = make_generator(random_lora, "ctranslate2", max_new_tokens=8, temperature=0.0, max_concurrent=16)
    replies = _drain(gen, prompts)
    assert [len(r.token_ids) for r in replies] and all(0 < len(r.token_ids) <= 8 for r in replies)
    assert all(len(r.logprobs) == len(r.token_ids) for r in replies)
    shared = len(common_prefix(prompts))
    assert gen.waves[0]["prefix"] == shared > 0 and gen.waves[0]["prompts"] == 4
    assert gen.waves[0]["fed"] == sum(len(p) - shared for p in prompts)


@needs_ct2
def test_greedy_replies_and_logprobs_match_transformers_on_the_same_weights(random_lora, ct2_cache):
    tok = random_lora.tokenizer
    prompts = [_chat(tok, t) for t in ("list files", "count the lines of a.txt", "make a dir called out")]
    ref = generate_batch(random_lora.model, tok, prompts, max_new_tokens=6, temperature=0.0)
    got = _drain(make_generator(random_lora, "ctranslate2", max_new_tokens=6, temperature=0.0), prompts)
    for r, g in zip(ref, got):
        assert g.token_ids == r.token_ids
        assert g.logprobs == pytest.approx(r.logprobs, abs=1e-4)


@needs_ct2
def test_sampled_logprobs_are_those_after_temperature(random_lora, ct2_cache):
    """At temperature 0.5 each recorded log-probability equals a teacher-forced forward's log-softmax(logits / 0.5)."""
    tok = random_lora.tokenizer
    prompt = _chat(tok, "list files")
    g = _drain(make_generator(random_lora, "ctranslate2", max_new_tokens=6, temperature=0.5, seed=3), [prompt])[0]
    with torch.no_grad():
        logits = random_lora.model(torch.tensor([prompt + g.token_ids])).logits[0].float()
    lp = torch.log_softmax(logits / 0.5, -1)
    want = [float(lp[len(prompt) - 1 + i, t]) for i, t in enumerate(g.token_ids)]
    assert g.logprobs == pytest.approx(want, abs=1e-3)


@needs_ct2
def test_the_served_weights_follow_the_actor_adapter(small_random_model, ct2_cache):
    pol = load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))
    tok = pol.tokenizer
    prompt = _chat(tok, "count the lines of a.txt")
    first = ct2_weights.served_model(pol)
    assert ct2_weights.stats()["refresh"] == "converted"
    before = _drain(make_generator(pol, "ctranslate2", max_new_tokens=8, temperature=0.0), [prompt])[0]
    assert ct2_weights.served_model(pol) is first and ct2_weights.stats()["refresh"] == "reused"
    with torch.no_grad():  # what an SFT or PPO step does: the actor's LoRA weights change (the critic's do not count)
        torch.manual_seed(1)
        for name, p in pol.model.named_parameters():
            if "lora_B.actor" in name:
                p.add_(torch.randn_like(p) * 2.0)
    after = _drain(make_generator(pol, "ctranslate2", max_new_tokens=8, temperature=0.0), [prompt])[0]
    assert ct2_weights.stats()["refresh"] == "converted"
    assert after.token_ids != before.token_ids
    assert after.token_ids == generate_batch(pol.model, tok, [prompt], max_new_tokens=8, temperature=0.0)[0].token_ids
    assert len([d for d in ct2_cache.iterdir() if not d.name.startswith(".")]) == 2


@needs_ct2
def test_greedy_episodes_on_the_bundled_model_choose_the_same_actions_as_the_transformers_engine(ct2_cache, bwrap_ok):
    """fp32 on both engines: the same replies, code-block stops (the stop pattern) included."""
    from rsi_lite.paths import TASKS_ROOT
    from rsi_lite.rollout.engine import RolloutConfig, run_episodes
    from rsi_lite.tasks import find_tasks

    core = find_tasks(TASKS_ROOT / "core")
    pol = load_policy(PolicyConfig(quantization="lora"))
    jobs = [(core[i], 0) for i in (0, 6, 12, 20)]
    cfg = RolloutConfig(max_turns=2, max_new_tokens=24, temperature=0.0, batch_size=4)
    runs = {b: run_episodes(pol, jobs, RolloutConfig(**{**cfg.to_dict(), "generation_backend": b}))
            for b in ("transformers", "ctranslate2")}
    actions = lambda t: [m["content"] for m in t.messages if m["kind"] == "action"]  # noqa: E731
    pairs = [(a, b) for x, y in zip(runs["ctranslate2"], runs["transformers"]) for a, b in zip(actions(x), actions(y))]
    assert sum(a != b for a, b in pairs) <= 1, pairs  # rare numerical ties aside
    assert any(t.messages[1]["content"].rstrip().endswith("```") for t in runs["ctranslate2"])
