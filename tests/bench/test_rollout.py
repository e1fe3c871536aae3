"""`python -m rsi_lite.bench.rollout`'s compute bound: the FLOPs it counts for a model's forwards.
Run: pytest tests/bench/test_rollout.py
"""

from rsi_lite.bench.rollout import forward_flops


def test_forward_flops_count_the_layers_for_every_token_and_the_head_for_decoded_ones(tmp_path):
    from rsi_lite.policy.model import PolicyConfig, load_policy, random_model

    pol = load_policy(PolicyConfig(model=str(random_model(tmp_path / "m")), quantization="lora"))
    base = pol.model.get_base_model()
    layers = sum(p.numel() for n, p in base.model.layers.named_parameters() if "lora_" not in n)
    head = base.lm_head.weight.numel()
    assert any("lora_" in n for n, _ in base.model.layers.named_parameters())  # adapters present, not counted
    assert forward_flops(pol.model, 10, 0) == 2 * layers * 10
    assert forward_flops(pol.model, 10, 3) == 2 * layers * 13 + 2 * head * 3
