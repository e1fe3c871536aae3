"""Rollout throughput: `python -m rsi_lite.bench.rollout [--batch 16] [--episodes 48] [--turns 2] [--tokens 64]`.

For the same first prompts (the plain harness on the first `--episodes` tasks of `core`,
then `hard`) and the same token budget, at `--batch` slots, prints generated tokens per
second of:

    raw         batched model.generate calls of `--batch` prompts each, every row forced to
                the full budget: decoding with no turn, no sandbox and no early stop
    engine      the rollout engine (continuous batching), bubblewrap sandbox, verifier included, once per
                `--backends` (transformers, native, ctranslate2: the same episodes, greedy)
    sequential  the continuous engine one episode at a time (batch size 1)
    raw-1       raw generate one prompt at a time (the first `--batch` prompts): raw / raw-1 is the most
                that batching itself gives on this machine, the ceiling of engine/sequential unless the
                engine beats raw

`--episodes` defaults to three times the batch: every real use (an evaluation at k=3, a
discovery round, a PPO step's queue) has more episodes than slots, and an engine is
judged on how well it keeps its slots full. With as many episodes as slots, the last
few stragglers decode alone at the end (`--episodes 16` shows that case).

Under each line, where that run's wall time went (`policy.gen.hf_continuous.ForwardMeter`): the
model's forwards and their share of the wall, the tokens they prefilled and decoded, and
the mean number of requests decoding per forward (how full the slots were kept). Raw
generate prefills every prompt whole, padding included; the engines share prompt prefixes
and each episode's earlier turns, but prefill every observation.

Targets (issue 3): engine >= 0.8 x raw, engine >= 4 x sequential: the lines `engine/raw = X.XX` and
`engine/sequential = Y.YY` (transformers). Issue 47: the native engine at least 3x the transformers engine on
the same episodes with the same greedy replies: the last lines are, for each other backend B,
`greedy episodes identical to transformers: N of M [B]`, `tokens/s[B] = N` and `B/transformers = R`, after
`tokens/s[transformers] = N`. What serving new weights costs (the actor's adapter changed, as after a PPO step):
for ctranslate2 merge, convert, load; for native the repack of its merged weights. And `bound`: the native run's
forwards' matmul FLOPs (`forward_flops`) at this machine's fp32 matmul rate, measured after the runs: the least
those forwards can take, and the ceiling of `native/transformers` if nothing else took a core. A benchmark, not a
test.
`--runs engine` skips the one-at-a-time runs (they take half the time).

Issue 47's measurement: `python -m rsi_lite.bench.rollout --batch 32 --episodes 80 --turns 3 --tokens 64
--runs engine`.
"""

from __future__ import annotations

import argparse
import time

import torch


def main(argv: list[str] | None = None) -> None:
    from ..harness.harnesses import make_harness
    from ..paths import TASKS_ROOT
    from ..policy.gen import ct2_weights
    from ..policy.gen.hf_continuous import ForwardMeter
    from ..policy.model import PolicyConfig, load_policy
    from ..rollout.engine import RolloutConfig, run_episodes
    from ..rollout.trajectory import TokenStream
    from ..tasks import find_tasks
    from ..timing import CLOCK

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--episodes", type=int, default=None, help="episodes per engine (default: 3 x --batch)")
    ap.add_argument("--turns", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--quantization", default="lora")
    ap.add_argument("--harness", default="plain")
    ap.add_argument("--page-size", type=int, default=RolloutConfig.page_size,
                    help="KV-cache page of the engines (tokens)")
    ap.add_argument("--open-episodes", type=int, default=RolloutConfig.open_episodes,
                    help="continuous engine: episodes open at once (0: the engine's default)")
    ap.add_argument("--backends", nargs="+", default=["transformers", "native"],
                    choices=["transformers", "native", "ctranslate2"], help="generation backends of the engine run")
    ap.add_argument("--compute-type", default="float32", help="ctranslate2: float32 (default) or int8")
    ap.add_argument("--runs", nargs="+", default=["engine", "sequential", "raw-1"],
                    choices=["engine", "sequential", "raw-1"], help="which runs (raw always runs)")
    a = ap.parse_args(argv)
    torch.set_num_threads(torch.get_num_threads())
    pol = load_policy(PolicyConfig(quantization=a.quantization))
    n = a.episodes or 3 * a.batch
    tasks = (find_tasks(TASKS_ROOT / "core") + find_tasks(TASKS_ROOT / "hard"))[:n]
    if len(tasks) < n:
        raise SystemExit(f"--episodes {n}: core and hard hold only {len(tasks)} tasks")
    h = make_harness(a.harness)
    prompts = [TokenStream(pol.tokenizer, h.system_prompt(), h.start(t.instruction)).prompt_ids() for t in tasks]

    # raw: generate calls of a.batch prompts, left-padded, every row exactly a.tokens long
    pad = pol.tokenizer.pad_token_id

    def raw_generate(prompts, batch):
        t0 = time.perf_counter()
        with ForwardMeter(pol.model) as meter:
            for s in range(0, len(prompts), batch):
                chunk = prompts[s:s + batch]
                width = max(map(len, chunk))
                ids = torch.tensor([[pad] * (width - len(p)) + p for p in chunk])
                mask = (torch.arange(width)[None, :] >= torch.tensor([width - len(p) for p in chunk])[:, None]).long()
                with torch.no_grad():
                    pol.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=a.tokens,
                                       min_new_tokens=a.tokens, do_sample=False, pad_token_id=pad)
        return time.perf_counter() - t0, meter

    raw_wall, raw_meter = raw_generate(prompts, a.batch)
    raw = len(prompts) * a.tokens / raw_wall

    cfg = RolloutConfig(harness=a.harness, max_turns=a.turns, max_new_tokens=a.tokens, temperature=0.0, batch_size=a.batch,
                        page_size=a.page_size, open_episodes=a.open_episodes)
    jobs = [(t, 0) for t in tasks]
    rates, outputs, native_stats = {}, {}, {}
    runs = [(f"engine[{b}]" if b != "transformers" else "engine", a.batch, b) for b in a.backends]
    runs += [("sequential", 1, "transformers")]
    for name, bs, backend in runs:
        if name.split("[")[0] not in a.runs:
            continue
        if backend == "ctranslate2":
            ct2_weights.served_model(pol, compute_type=a.compute_type)  # converted once before the clock starts
        CLOCK.reset()
        t0 = time.perf_counter()
        one = {"open_episodes": 1} if bs == 1 else {}  # one episode at a time: no other opened ahead
        with ForwardMeter(pol.model) as meter:
            trajs = run_episodes(pol, jobs, RolloutConfig(**{**cfg.to_dict(), "batch_size": bs,
                                                             "generation_backend": backend,
                                                             "compute_type": a.compute_type, **one}))
        wall = time.perf_counter() - t0
        gen = sum(t.tokens["generated"] for t in trajs)
        rates[name] = gen / wall
        print(f"{name:10} {gen} tokens in {wall:.1f} s = {rates[name]:.1f} tokens/s "
              f"(sandbox {sum(t.timings['sandbox_s'] for t in trajs):.1f} s, verifier {sum(t.timings['verify_s'] for t in trajs):.1f} s)")
        stats = meter.summary(wall) if backend == "transformers" else _engine_stats(trajs, wall)
        if stats:
            print(_meter_line(stats))
        if backend == "native" and stats:
            native_stats = {**stats, "generated": gen}
        outputs[name] = [t.token_ids for t in trajs]
    print(f"raw        {len(prompts) * a.tokens} tokens at batch {a.batch} = {raw:.1f} tokens/s")
    print(_meter_line(raw_meter.summary(raw_wall)))
    if "raw-1" in a.runs:
        one_wall, one_meter = raw_generate(prompts[:a.batch], 1)
        rates["raw-1"] = a.batch * a.tokens / one_wall
        print(f"raw-1      {a.batch * a.tokens} tokens one prompt at a time = {rates['raw-1']:.1f} tokens/s; "
              f"raw/raw-1 = {raw / rates['raw-1']:.2f} (what batching alone gives here)")
        print(_meter_line(one_meter.summary(one_wall)))
    if "engine" in rates:
        print(f"engine/raw = {rates['engine'] / raw:.2f}")
    if {"engine", "sequential"} <= rates.keys():
        print(f"engine/sequential = {rates['engine'] / rates['sequential']:.2f}")
    if "engine[ctranslate2]" in rates:
        _refresh_cost(pol, a.compute_type)
    if "engine[native]" in rates:
        _native_refresh_cost(pol)
        _compute_bound(pol, native_stats, rates)
    if "engine" in rates:
        print(f"tokens/s[transformers] = {rates['engine']:.1f}")
    for b in a.backends:
        if b == "transformers" or f"engine[{b}]" not in rates:
            continue
        if "engine" in outputs:
            same = sum(x == y for x, y in zip(outputs["engine"], outputs[f"engine[{b}]"]))
            print(f"greedy episodes identical to transformers: {same} of {len(jobs)} [{b}]")
        print(f"tokens/s[{b}] = {rates[f'engine[{b}]']:.1f}")
        if "engine" in rates:
            print(f"{b}/transformers = {rates[f'engine[{b}]'] / rates['engine']:.2f}")


def _change_adapter(pol) -> None:
    """Move every LoRA B matrix of the actor in place, as a PPO step's optimizer does."""
    with torch.no_grad():
        for name, p in pol.model.named_parameters():
            if "lora_B" in name:
                p.add_(1e-3)


def _refresh_cost(pol, compute_type: str) -> None:
    """Change the actor's adapter (as a PPO step does) and time serving the new weights."""
    from ..policy.gen import ct2_weights

    _change_adapter(pol)
    t0 = time.perf_counter()
    ct2_weights.served_model(pol, compute_type=compute_type)
    st = ct2_weights.stats()
    print(f"refresh    new actor weights served in {time.perf_counter() - t0:.1f} s ({st['refresh']}: fingerprint "
          f"{st['key_s']:.2f} s, merge + convert {st['convert_s']:.1f} s, load {st['load_s']:.1f} s)")


def _native_refresh_cost(pol) -> None:
    """Change the actor's adapter in place (as a PPO step does) and time the native engine's repack of the merged
    weights when its next generator opens: the weight refresh, paid once a rollout after a step."""
    from ..policy.gen.native_engine import NativeGenerator

    _change_adapter(pol)
    with NativeGenerator(pol.model, pol.tokenizer, max_new_tokens=1) as gen:
        print(f"refresh    new actor weights served by the native engine in {gen.stats['pack_s']:.2f} s "
              "(the adapters merged into the packed weights)")


def forward_flops(model, prefill_tokens: int, decode_tokens: int) -> float:
    """The matmul FLOPs of a decoder's forwards: 2 x the layers' weights for every token fed (prefilled or decoded),
    and 2 x the output head's for each decoded one (a prefilled token's logits are never computed); the LoRA
    adapters are merged into the weights (`native_engine`), attention's own products are left out (a few percent
    at these lengths), so this is the least work the forwards can be."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    layers = sum(p.numel() for n, p in base.model.layers.named_parameters() if "lora_" not in n)
    head = base.get_output_embeddings().weight.numel()
    return 2.0 * layers * (prefill_tokens + decode_tokens) + 2.0 * head * decode_tokens


def _compute_bound(pol, stats: dict, rates: dict) -> None:
    """What the native run's forwards must cost at this machine's fp32 matmul rate (measured now), and the
    generated tokens per second that would allow if nothing else (verifiers, sandboxes, attention, the small
    operations between matmuls) took a core: the ceiling of `native/transformers` in fp32 here."""
    from .update import matmul_rate

    if not stats:
        return
    flops = forward_flops(pol.model, stats["prefill_tokens"], stats["decode_tokens"])
    rate = matmul_rate()
    least = flops / rate
    ceiling = stats["generated"] / least if least else 0.0
    line = (f"bound      the native run's forwards: {flops / 1e12:.2f} TFLOP; at this machine's matmul rate now "
            f"({rate / 1e9:.0f} GFLOP/s) at least {least:.1f} s of its {stats['forward_s']:.1f} s, so at most "
            f"{ceiling:.0f} tokens/s")
    if "engine" in rates:
        line += f" = {ceiling / rates['engine']:.1f} x transformers"
    print(line + " (forwards alone, nothing else on the cores)")


def _engine_stats(trajs, wall: float) -> dict:
    """A non-transformers engine's own forward figures for this run (`forward_stats`, gathered by the rollout
    into the process clock), as `ForwardMeter.summary` gives them; {} where the engine reports none."""
    from ..timing import CLOCK

    got = CLOCK.raw()
    if not got.get("rollout/forward"):
        return {}
    out = {k: got.get(f"rollout/{k}", 0) for k in ("forwards", "prefill_tokens", "decode_tokens", "decode_forwards")}
    out["forward_s"], out["forward_share"] = got["rollout/forward"], got["rollout/forward"] / wall
    out["mean_decode_rows"] = out["decode_tokens"] / max(out.pop("decode_forwards"), 1)
    return out


def _meter_line(m: dict) -> str:
    """Where a run's wall time went: the model's forwards (their share of the wall), the tokens they prefilled,
    and how many requests decoded per forward on average (the occupancy of the slots)."""
    return (f"           {m['forwards']:.0f} forwards, {m['forward_s']:.1f} s = {100 * m['forward_share']:.0f}% of the wall; "
            f"{m['prefill_tokens']:.0f} tokens prefilled, {m['decode_tokens']:.0f} decoded, "
            f"{m['mean_decode_rows']:.1f} decoding per forward")


if __name__ == "__main__":
    main()
