"""vLLM's sampling seed is per request: k requests of one prompt must carry k different seeds, or vLLM samples the
same reply k times (evaluation's k runs and self-rewrite's discovery samples would collapse to one).

Needs no vLLM: only the vLLM objects `VLLMGenerator` touches (`SamplingParams`, the engine's `add_request`) are
stand-ins that record what they are given.

Run: PYTHONPATH=. .venv/bin/python -m pytest -q tests/policy/test_vllm_seeds.py
"""

from types import SimpleNamespace as NS

from rsi_lite.policy.gen import vllm_engine


class _RecordingEngine:
    def __init__(self):
        self.requests = []

    def add_request(self, rid, prompt, params, lora_request=None):
        self.requests.append((rid, prompt, params))

    def has_unfinished_requests(self):
        return False

    def abort_request(self, rids):
        pass


def _generator(monkeypatch, engine, seed):
    made = []

    def sampling_params(**kw):
        made.append(kw)
        return NS(**kw)

    monkeypatch.setattr(vllm_engine, "_vllm", lambda: NS(SamplingParams=sampling_params))
    policy = vllm_engine.VLLMPolicy(tokenizer=NS(eos_token_id=2), engine=engine)
    return vllm_engine.VLLMGenerator(policy, max_new_tokens=8, temperature=0.6, seed=seed)


def _seeds(monkeypatch, seed, k=6):
    engine = _RecordingEngine()
    with _generator(monkeypatch, engine, seed) as gen:
        for i in range(k):
            gen.submit(("task", i), [5, 6, 7])  # the same prompt k times
    assert [r[1]["prompt_token_ids"] for r in engine.requests] == [[5, 6, 7]] * k
    return [r[2].seed for r in engine.requests]


def test_k_requests_of_one_prompt_get_k_different_seeds(monkeypatch):
    seeds = _seeds(monkeypatch, seed=3)
    assert len(set(seeds)) == len(seeds), seeds
    assert all(isinstance(s, int) and 0 <= s < 2**31 for s in seeds)


def test_the_seeds_are_reproducible_and_differ_between_generator_seeds(monkeypatch):
    assert _seeds(monkeypatch, seed=3) == _seeds(monkeypatch, seed=3)
    # dispatch.complete gives each chunk of prompts its own generator seed (seed + start): no overlap
    assert not set(_seeds(monkeypatch, seed=3)) & set(_seeds(monkeypatch, seed=4))


def test_the_other_sampling_settings_are_the_same_for_every_request(monkeypatch):
    engine = _RecordingEngine()
    with _generator(monkeypatch, engine, seed=0) as gen:
        gen.submit("a", [1])
        gen.submit("b", [1])
    first, second = (vars(r[2]) for r in engine.requests)
    assert {k: v for k, v in first.items() if k != "seed"} == {k: v for k, v in second.items() if k != "seed"}
    assert first["temperature"] == 0.6 and first["max_tokens"] == 8 and first["logprobs"] == 0
