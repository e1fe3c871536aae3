"""The bundled model, its preparation, QLoRA loading and generation with log-probabilities.

The generation checks run on a tiny random Llama (fast, exact); the bundled model is
prepared once per machine (about 25 s, then cached) and loaded in 4-bit.
Run: pytest tests/policy/test_policy.py
"""

import pytest
import torch

from rsi_lite.policy.gen.hf_generate import generate_batch
from rsi_lite.policy.model import BUNDLED, PolicyConfig, load_policy, model_info, prepare_model


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(prepare_model()))
    tok.pad_token = tok.eos_token
    return tok


@pytest.fixture(scope="module")
def tiny(tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    return LlamaForCausalLM(cfg).eval()


def test_prepared_model_is_cached_and_described():
    path = prepare_model()
    assert (path / "model.safetensors").is_file() and (path / "config.json").is_file()
    assert prepare_model() == path  # second call: no work
    info = model_info(BUNDLED)
    assert info["architecture"] == "LlamaForCausalLM" and info["parameters"] == 134_515_008
    assert info["prepared_from"].endswith(".gguf")


def test_the_small_random_model_is_a_local_model_directory_made_once(small_random_model):
    from rsi_lite.policy.model import random_model

    info = model_info(str(small_random_model))
    assert info["layers"] == 2 and info["hidden_size"] == 64 and info["parameters"] < 5_000_000
    stamp = (small_random_model / "config.json").stat().st_mtime_ns
    assert random_model(small_random_model) == small_random_model  # second call: no work
    assert (small_random_model / "config.json").stat().st_mtime_ns == stamp
    assert not [p for p in small_random_model.parent.iterdir() if p.name.startswith(".random-")]
    pol = load_policy(PolicyConfig(model=str(small_random_model), quantization="full"))
    assert pol.tokenizer.eos_token == "<|im_end|>"


@pytest.mark.parametrize("temperature, top_p", [(0.0, 1.0), (1.0, 1.0), (0.7, 1.0), (0.8, 0.9)])
def test_logprobs_match_a_teacher_forced_forward_pass(tiny, tokenizer, temperature, top_p):
    prompts = [tokenizer.encode("hello there"), tokenizer.encode("a longer prompt, with more tokens in it")]
    gens = generate_batch(tiny, tokenizer, prompts, max_new_tokens=8, temperature=temperature, top_p=top_p, seed=3)
    for p, g in zip(prompts, gens):
        assert len(g.logprobs) == len(g.token_ids) > 0
        with torch.no_grad():
            logits = tiny(torch.tensor([p + g.token_ids])).logits[0, len(p) - 1:-1]
        logits = logits / (temperature if temperature > 0 else 1.0)
        if top_p < 1.0:
            from transformers import TopPLogitsWarper

            logits = TopPLogitsWarper(top_p)(None, logits)
        ref = torch.log_softmax(logits, -1).gather(1, torch.tensor(g.token_ids)[:, None]).squeeze(1)
        assert torch.allclose(ref, torch.tensor(g.logprobs), atol=1e-4)


def test_left_padding_does_not_change_greedy_output(tiny, tokenizer):
    short, long = tokenizer.encode("ls -la"), tokenizer.encode("please list every file in the folder, with sizes")
    alone = generate_batch(tiny, tokenizer, [short], max_new_tokens=6, temperature=0)[0]
    batched = generate_batch(tiny, tokenizer, [long, short], max_new_tokens=6, temperature=0)[1]
    assert alone.token_ids == batched.token_ids


def test_stop_token_ends_a_generation(tiny, tokenizer):
    g = generate_batch(tiny, tokenizer, [tokenizer.encode("x")], max_new_tokens=5, temperature=0)[0]
    stop = g.token_ids[1]
    g2 = generate_batch(tiny, tokenizer, [tokenizer.encode("x")], max_new_tokens=5, temperature=0, stop_ids=[stop])[0]
    assert g2.token_ids == g.token_ids[:2] and g2.finish_reason == "stop"


def test_qlora_policy_loads_with_a_trainable_actor_adapter_only():
    pol = load_policy(PolicyConfig(quantization="4bit"))
    trainable = [n for n, p in pol.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n and ".actor." in n for n in trainable)
    assert any("Linear4bit" in type(m).__name__ for m in pol.model.modules())
    ids = pol.tokenizer.apply_chat_template([{"role": "user", "content": "Say hi."}], add_generation_prompt=True)
    ids = ids["input_ids"] if hasattr(ids, "keys") else ids
    g = generate_batch(pol.model, pol.tokenizer, [list(ids)], max_new_tokens=4, temperature=0)[0]
    assert len(g.token_ids) >= 1


def test_bad_quantization_is_refused():
    with pytest.raises(ValueError, match="quantization"):
        load_policy(PolicyConfig(quantization="8bit"))


def test_per_request_attention_equals_the_block_diagonal_sdpa():
    """`varlen_sdpa` on a packed batch (a prefill chunk after 3 cached tokens, a decoded token, a fresh
    prompt) gives what the stock sdpa gives with the manager's block-diagonal mask."""
    from types import SimpleNamespace

    from transformers.generation.continuous_batching.utils import build_attention_mask
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from rsi_lite.policy.gen.hf_continuous import varlen_sdpa

    torch.manual_seed(0)
    cu_q, cu_k = [0, 5, 6, 10], [0, 8, 14, 18]  # (q, k) lengths (5, 8), (1, 6), (4, 4)
    q, k, v = torch.randn(1, 4, 10, 8), torch.randn(1, 2, 18, 8), torch.randn(1, 2, 18, 8)
    mask = torch.full((1, 1, 10, 18), torch.finfo(torch.float32).min)
    build_attention_mask(mask, cu_q, cu_k)
    module = SimpleNamespace(num_key_value_groups=2, is_causal=True)
    bounds = dict(cu_seq_lens_q=torch.tensor(cu_q), cu_seq_lens_k=torch.tensor(cu_k), is_causal=False)
    ref, _ = sdpa_attention_forward(module, q, k, v, mask, scaling=0.5, **bounds)
    got, _ = varlen_sdpa(module, q, k, v, mask, scaling=0.5, **bounds)
    assert got.shape == ref.shape == (1, 10, 4, 8)
    assert torch.allclose(got, ref, atol=1e-5)
    plain, _ = varlen_sdpa(module, q, k, v, mask, scaling=0.5, is_causal=False)  # no bounds: the stock path
    assert torch.equal(plain, ref)


def test_the_continuous_generator_attends_per_request_on_the_cpu_with_the_same_replies(tiny, tokenizer, monkeypatch):
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    from rsi_lite.policy.gen import hf_continuous as batching

    calls = []
    real = batching.varlen_sdpa
    monkeypatch.setattr(batching, "varlen_sdpa", lambda *a, **k: calls.append(1) or real(*a, **k))
    torch.manual_seed(1)
    prompts = [torch.randint(100, 4000, (n,)).tolist() for n in (30, 41, 17, 52)]
    replies = {}
    for route in (True, False):
        calls.clear()
        with batching.ContinuousGenerator(tiny, tokenizer, max_new_tokens=12, temperature=0.0, stop_ids=[0],
                                          max_concurrent=4, per_request_attention=route) as g:
            for i, p in enumerate(prompts):
                g.submit(i, p)
            got = {}
            while len(got) < len(prompts):
                got.update(dict(g.poll()))
        replies[route] = {i: r.token_ids for i, r in got.items()}
        assert "sdpa" not in ALL_ATTENTION_FUNCTIONS._local_mapping  # routed only while a generator runs
        assert bool(calls) == route
    assert replies[True] == replies[False]


def test_the_forward_meter_counts_what_each_batch_prefilled_and_decoded(tiny, tokenizer):
    from rsi_lite.policy.gen.hf_continuous import ContinuousGenerator, ForwardMeter

    torch.manual_seed(2)
    prompts = [torch.randint(100, 4000, (n,)).tolist() for n in (30, 41, 17)]  # shorter than a page: no shared prefix
    vocab_rows = []  # rows projected onto the vocabulary, per forward
    hook = tiny.lm_head.register_forward_hook(lambda mod, inp, out: vocab_rows.append(inp[0].shape[-2]))
    with ForwardMeter(tiny) as meter:
        with ContinuousGenerator(tiny, tokenizer, max_new_tokens=6, temperature=0.0, stop_ids=[0],
                                 max_concurrent=3) as g:
            for i, p in enumerate(prompts):
                g.submit(i, p)
            got = {}
            while len(got) < len(prompts):
                got.update(dict(g.poll()))
    hook.remove()
    m = meter.summary(wall=100.0)
    assert "forward" not in vars(tiny)  # unwrapped afterwards
    # metering changes nothing the manager computes: one vocabulary row per token sampled, none per prefilled token
    assert sum(vocab_rows) == sum(len(r.token_ids) for r in got.values())
    assert m["prefill_tokens"] == sum(map(len, prompts))
    # a reply's first token comes from its prompt's forward, each later one from a one-token forward
    assert m["decode_tokens"] == sum(len(r.token_ids) - 1 for r in got.values())
    assert 1 <= m["mean_decode_rows"] <= 3 and m["forwards"] == len(meter.calls)
    assert 0 < m["forward_s"] <= 100 and m["forward_share"] == m["forward_s"] / 100

    with ForwardMeter(tiny) as meter:  # generate: every row of the batch is a request
        with torch.no_grad():
            tiny.generate(input_ids=torch.tensor([prompts[0][:9], prompts[1][:9]]), max_new_tokens=4,
                          min_new_tokens=4, do_sample=False, pad_token_id=0)
    m = meter.summary()
    assert (m["forwards"], m["prefill_tokens"], m["decode_tokens"], m["mean_decode_rows"]) == (4, 18, 6, 2.0)


def test_loading_a_lora_policy_and_an_idle_engine_print_no_library_noise(small_random_model, caplog):
    """What a notebook's model-loading cell shows: no FutureWarning from peft's use of a deprecated transformers
    property, and no "Batch processor was not initialized" from an engine that was opened and closed unused."""
    import logging
    import warnings

    from rsi_lite.policy.critic import add_critic
    from rsi_lite.policy.gen.hf_continuous import ContinuousGenerator

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", append=True)  # everything shown that the filters in force let through
        pol = load_policy(PolicyConfig(model=str(small_random_model), quantization="lora"))
        add_critic(pol)
    assert not [w for w in seen if "is_gradient_checkpointing" in str(w.message)]
    with caplog.at_level(logging.WARNING, logger="ContinuousBatchingLogger"):
        with ContinuousGenerator(pol.model, pol.tokenizer, max_new_tokens=4, temperature=0.0):
            pass
    assert "not initialized" not in caplog.text
    assert logging.getLogger("ContinuousBatchingLogger").level == logging.NOTSET  # put back as it was
