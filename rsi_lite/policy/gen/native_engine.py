"""The kit's own decode loop: the policy's modules, each episode's cache kept, one packed forward a step.

Why it exists: a rollout is many short replies to long, ragged, growing prompts. What decides its speed on a
CPU is (1) never recomputing what an episode has already seen: its earlier turns, and the system prompt
every episode shares; (2) a decode step that costs little more than the model's matmuls. transformers'
continuous-batching manager (`hf_continuous`) does (1) through paged blocks but pays for it at every step
(block tables, a per-request attention call through its interface, its scheduler); CTranslate2
(`ct2_engine`) does (2) but not (1). This engine does both, in about two hundred lines of plain torch:

    cache        one preallocated key/value pool per layer, [slots, kv_heads, capacity, head_dim]: a slot
                 per open episode. An episode keeps its slot between turns, so its next prompt (its last
                 prompt + reply + the new observation) computes only the tokens after the longest prefix
                 the slot already holds. A new episode starts from the slot (any slot) that shares the
                 longest prefix with its prompt, copied: the system prompt is computed once.
    step         every request in flight gives its next tokens (one for a reply being decoded, a chunk of
                 its prompt otherwise), packed into one [1, tokens] forward through the policy's own
                 modules, each projection one packed matmul with the LoRA adapters merged in (made again when
                 a generator opens after the adapters changed: a PPO step's new actor costs one repack,
                 `stats['pack_s']`); attention runs per request on views of its slot, so no request attends
                 to another's keys and nothing is padded.
    sampling     log-probabilities of the distribution the token was drawn from (temperature, then top-p),
                 as in `hf_generate`; greedy: the plain log-softmax.

The forward reuses the model's own layers and rotary embedding; only the attention's cache and the
packing are ours, so greedy replies equal the transformers engine's (checked by a test and by
`python -m rsi_lite.bench.rollout`). Llama-style attention only (SmolLM2, Llama, Qwen2: no q/k norms, no
sliding window): `supports(model)` says whether a model is served, and `dispatch` falls back to
transformers where not.

The scheduling lives in the caller: `poll()` runs one step and returns the replies it finished, so the
rollout engine's loop alternates steps with its sandbox bookkeeping, and torch's threads do the work.
"""

from __future__ import annotations

import time

from .types import Replies, common_prefix

SUPPORTED_ATTENTION = ("LlamaAttention", "Qwen2Attention")


def _decoder(model):
    """The base causal LM under a peft wrapper (peft's LoRA layers stay in place inside it)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return base


def supports(model) -> bool:
    """Whether this engine serves `model`: a decoder of Llama-style attention layers (see the docstring)."""
    base = _decoder(model)
    layers = getattr(getattr(base, "model", None), "layers", None)
    return bool(layers) and all(type(layer.self_attn).__name__ in SUPPORTED_ATTENTION for layer in layers)


def sample_rows(logits, temperature: float, top_p: float, generator):
    """One token per row of `logits` [rows, vocab] and its log-probability under the distribution it was drawn
    from: temperature, then top-p (transformers' `TopPLogitsWarper` rule: the smallest set of most likely tokens
    whose mass exceeds `top_p`, at least one kept); greedy (temperature 0) takes the argmax, with the plain
    log-softmax."""
    import torch

    scores = logits.float()
    if temperature <= 0:
        tokens = scores.argmax(-1)
        return tokens, torch.log_softmax(scores, -1).gather(1, tokens[:, None]).squeeze(1)
    if temperature != 1.0:
        scores = scores / temperature
    if top_p < 1.0:
        sorted_scores, order = torch.sort(scores, descending=False)
        cum = sorted_scores.softmax(-1).cumsum(-1)
        drop = cum <= (1 - top_p)
        drop[:, -1] = False
        scores = scores.masked_fill(drop.scatter(1, order, drop), float("-inf"))
    logp = torch.log_softmax(scores, -1)
    tokens = torch.multinomial(logp.exp(), 1, generator=generator).squeeze(1)
    return tokens, logp.gather(1, tokens[:, None]).squeeze(1)


def _packed(weight, hint: int):
    """`x -> x @ weight.T` through oneDNN with the weight reordered once into its blocked layout: at decode's few
    rows a plain `F.linear` re-packs the weight on every call and runs at half the speed (docs/experiments.md).
    Where this torch has no oneDNN, the plain function."""
    import torch
    import torch.nn.functional as F

    if weight.device.type == "cpu" and weight.dtype == torch.float32 and torch.backends.mkldnn.is_available():
        try:
            packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), hint)
            return lambda x: torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
        except (AttributeError, RuntimeError):
            pass
    w = weight.detach()
    return lambda x: F.linear(x, w)


class _Projection:
    """The linear layers that read one input (q, k, v; gate, up; or one alone) as one packed matmul (`_packed`) of
    their base weights, stacked, with each active LoRA adapter merged in (`W + scaling * B @ A` in that layer's
    rows). The packed weight is cached on the first module under a key of the base weights' and the adapters'
    storage and versions, so it is made again only when one of them changed: once a rollout after a PPO step
    (the weight refresh; `NativeGenerator.stats['pack_s']`), never within one. Merged, a decode step makes one
    matmul a projection instead of three (the base's and the adapter's two), the difference that counts when
    the sandboxes share the cores. A layer this cannot reproduce (a DoRA variant, a quantized base, dropout on
    the adapter) is called as a module."""

    def __init__(self, modules: list, hint: int, stats: dict | None = None):
        import torch

        self.modules, self.plain = modules, all(self._plain(m) for m in modules)
        if not self.plain:
            return
        bases = [getattr(m, "base_layer", m) for m in modules]
        if any(b.bias is not None for b in bases):
            self.bias = torch.cat([b.bias.detach() if b.bias is not None else b.weight.new_zeros(b.out_features)
                                   for b in bases])
        else:
            self.bias = None
        loras, start = [], 0
        for m, b in zip(modules, bases):
            if hasattr(m, "lora_A") and not m.disable_adapters and not m.merged:
                for name in m.active_adapters:
                    if name in m.lora_A.keys():
                        loras.append((m.lora_A[name].weight, m.lora_B[name].weight, float(m.scaling[name]),
                                      slice(start, start + b.out_features)))
            start += b.out_features
        key = (tuple((b.weight.data_ptr(), b.weight._version) for b in bases)
               + tuple((a.data_ptr(), a._version, bw.data_ptr(), bw._version, s, c.start) for a, bw, s, c in loras))
        cache = getattr(modules[0], "_rsi_packed", None)
        if cache is None or cache[0] != key:
            t0 = time.perf_counter()
            with torch.no_grad():
                w = torch.cat([b.weight.detach() for b in bases]) if len(bases) > 1 or loras else bases[0].weight
                for a, bw, s, rows in loras:
                    w[rows] += s * (bw.detach() @ a.detach())
                cache = (key, _packed(w, hint))
            modules[0]._rsi_packed = cache
            if stats is not None:
                stats["pack_s"] = stats.get("pack_s", 0.0) + time.perf_counter() - t0
        self.base = cache[1]

    @staticmethod
    def _plain(m) -> bool:
        import torch

        base = getattr(m, "base_layer", m)
        if type(base) is not torch.nn.Linear:
            return False
        drop = getattr(m, "lora_dropout", {})
        return not getattr(m, "lora_variant", None) and all(
            type(drop[n]) is torch.nn.Identity for n in getattr(m, "active_adapters", []) if n in drop)

    def __call__(self, x):
        import torch

        if not self.plain:
            return torch.cat([m(x) for m in self.modules], dim=-1)
        y = self.base(x)
        return y if self.bias is None else y + self.bias


class _Request:
    __slots__ = ("rid", "key", "slot", "feed", "tokens", "logprobs")

    def __init__(self, rid: str, key, slot: int, feed: list[int]):
        self.rid, self.key, self.slot, self.feed = rid, key, slot, feed
        self.tokens: list[int] = []
        self.logprobs: list[float] = []

    @property
    def decoding(self) -> bool:
        """Its prompt is in the cache and it feeds its last sampled token (else it feeds a chunk of its prompt)."""
        return bool(self.tokens) and len(self.feed) == 1


class NativeGenerator:
    """`submit(key, prompt_ids)`, then `poll()` runs one step and yields `(key, Generation)` for each reply it
    finished. A key's slot (its cache) is kept for its next prompt until `release(key)`, or until a new key needs
    a slot and this one is the longest idle."""

    def __init__(self, model, tokenizer, *, max_new_tokens: int, temperature: float = 0.6, top_p: float = 1.0,
                 stop_ids: list[int] | None = None, stop_pattern=None, seed: int = 0, max_concurrent: int = 16,
                 context_budget: int = 2048, cache_slots: int = 0, max_batch_tokens: int = 512):
        if not supports(model):
            raise ValueError("generation_backend 'native': this model's attention is not Llama-style "
                             f"({', '.join(SUPPORTED_ATTENTION)}); use 'transformers'")
        self.model, self.base = model, _decoder(model)
        self._replies = Replies(tokenizer, stop_ids or [tokenizer.eos_token_id], stop_pattern)
        self.stop_ids = set(self._replies.stop_ids)
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.seed, self.max_concurrent, self.max_batch_tokens = seed, max_concurrent, max_batch_tokens
        self.capacity = context_budget + max_new_tokens
        """Tokens a slot holds: a prompt of up to `context_budget` tokens and its reply."""
        self.n_slots = cache_slots or 2 * max_concurrent + 1
        self.pool = None
        self.slot_tokens: list[list[int]] = [[] for _ in range(self.n_slots)]
        """The tokens whose keys and values slot s holds, in order (positions 0..len-1)."""
        self.slot_of: dict = {}
        """key -> its slot; insertion order is the order keys went idle (the first is evicted first)."""
        self.free = list(range(self.n_slots))
        self.live: dict[str, _Request] = {}
        self.stats = {"forwards": 0, "forward_s": 0.0, "prefill_tokens": 0, "decode_tokens": 0, "decode_forwards": 0,
                      "pack_s": 0.0}

    # -- the generator interface (`dispatch`) -----------------------------------------------------------
    def __enter__(self):
        import torch

        cfg = self.base.config
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        dtype = next(self.base.parameters()).dtype
        device = next(self.base.parameters()).device
        shape = (self.n_slots, cfg.num_key_value_heads, self.capacity, head_dim)
        # torch.empty: pages are touched only as slots fill, so the pool costs what episodes really hold
        self.pool = [(torch.empty(shape, dtype=dtype, device=device), torch.empty(shape, dtype=dtype, device=device))
                     for _ in self.base.model.layers]
        self.generator = torch.Generator(device="cpu").manual_seed(self.seed)
        hint, st = self.max_concurrent, self.stats
        self.proj = [(_Projection([a.q_proj, a.k_proj, a.v_proj], hint, st), _Projection([a.o_proj], hint, st),
                      _Projection([layer.mlp.gate_proj, layer.mlp.up_proj], hint, st),
                      _Projection([layer.mlp.down_proj], hint, st))
                     for layer in self.base.model.layers for a in [layer.self_attn]]
        self.head = _Projection([self.base.lm_head], hint, st)
        a, mlp = self.base.model.layers[0].self_attn, self.base.model.layers[0].mlp
        self.widths = [getattr(a, n).out_features for n in ("q_proj", "k_proj", "v_proj")]
        self.widths_mlp = [getattr(mlp, n).out_features for n in ("gate_proj", "up_proj")]
        self.head_dim = head_dim
        return self

    def __exit__(self, *exc):
        self.pool, self.live = None, {}
        return False

    @property
    def busy(self) -> int:
        """Requests submitted and not yet returned."""
        return len(self.live)

    def submit(self, key, prompt_ids: list[int]) -> None:
        prompt = list(prompt_ids)
        if not prompt:
            raise ValueError("native engine: an empty prompt")
        if len(prompt) + self.max_new_tokens > self.capacity:
            raise ValueError(f"native engine: a prompt of {len(prompt)} tokens + {self.max_new_tokens} new exceeds "
                             f"the cache's {self.capacity} tokens a slot (context_budget + max_new_tokens)")
        slot = self._slot_for(key, prompt)
        keep = min(len(common_prefix([self.slot_tokens[slot], prompt])), len(prompt) - 1)  # the last token gives logits
        del self.slot_tokens[slot][keep:]
        rid = self._replies.new(key)
        self.live[rid] = _Request(rid, key, slot, prompt[keep:])

    def release(self, key) -> None:
        """`key` will not speak again: its slot is free (its tokens stay as a prefix source until reused)."""
        slot = self.slot_of.pop(key, None)
        if slot is not None:
            self.free.append(slot)

    def poll(self, timeout: float = 0.05):
        """One step: feed every request in flight, sample where a prompt or a token was completed, and yield
        `(key, Generation)` for each reply finished. With nothing in flight, wait a little (at most `timeout`)."""
        if not self.live:
            time.sleep(min(timeout, 0.01))
            return
        yield from self._step()

    def forward_stats(self) -> dict:
        """What the forwards computed (the rollout's `rollout/forward`, `.../prefill_tokens`, `.../decode_tokens`)."""
        return dict(self.stats)

    # -- slots -------------------------------------------------------------------------------------------
    def _slot_for(self, key, prompt: list[int]) -> int:
        """`key`'s own slot; for a new key a free slot (else the longest-idle key's), filled with the longest prefix
        of `prompt` that any slot holds."""
        if key in self.slot_of:
            slot = self.slot_of.pop(key)  # re-inserted below: in flight now, idle last
            self.slot_of[key] = slot
            return slot
        busy = {r.slot for r in self.live.values()}
        if not self.free:
            idle = next((k for k, s in self.slot_of.items() if s not in busy), None)
            if idle is None:
                raise RuntimeError(f"native engine: all {self.n_slots} cache slots are in flight")
            self.free.append(self.slot_of.pop(idle))
        shared = [len(common_prefix([held, prompt])) for held in self.slot_tokens]
        donor = max(range(self.n_slots), key=shared.__getitem__)
        n = min(shared[donor], len(prompt) - 1)
        slot = donor if donor in self.free else self.free[-1]
        self.free.remove(slot)
        if slot != donor:
            for k, v in self.pool:
                k[slot, :, :n] = k[donor, :, :n]
                v[slot, :, :n] = v[donor, :, :n]
            self.slot_tokens[slot] = self.slot_tokens[donor][:n]
        self.slot_of[key] = slot
        return slot

    # -- one step ----------------------------------------------------------------------------------------
    def _step(self):
        import torch

        reqs = list(self.live.values())
        decoding = [r for r in reqs if r.decoding]
        budget = max(self.max_batch_tokens - len(decoding), 64)
        batch: list[tuple[_Request, list[int]]] = [(r, r.feed) for r in decoding]
        for r in reqs:
            if budget <= 0:
                break
            if not r.decoding:
                chunk = r.feed[:budget]
                batch.append((r, chunk))
                budget -= len(chunk)
        t0 = time.perf_counter()
        with torch.no_grad():
            logits = self._forward(batch)
        self.stats["forwards"] += 1
        self.stats["forward_s"] += time.perf_counter() - t0
        self.stats["decode_tokens"] += len(decoding)
        self.stats["decode_forwards"] += bool(decoding)
        self.stats["prefill_tokens"] += sum(len(c) for r, c in batch if not r.decoding)
        rows, sampled = [], []
        for i, (r, chunk) in enumerate(batch):
            self.slot_tokens[r.slot] += chunk
            r.feed = r.feed[len(chunk):]
            if not r.feed:
                rows.append(i)
                sampled.append(r)
        if not sampled:
            return
        tokens, lps = sample_rows(logits[rows], self.temperature, self.top_p, self.generator)
        for r, tok, lp in zip(sampled, tokens.tolist(), lps.tolist()):
            r.tokens.append(tok)
            r.logprobs.append(lp)
            done = tok in self.stop_ids or len(r.tokens) >= self.max_new_tokens
            out = self._replies.update(r.rid, r.tokens, r.logprobs, done, self._cancel)
            if out is not None:
                self.live.pop(r.rid, None)
                yield out
            else:
                r.feed = [tok]

    def _cancel(self, rid: str) -> None:
        self.live.pop(rid, None)

    def _forward(self, batch):
        """One packed forward of each request's chunk; the logits at each chunk's last token [len(batch), vocab]."""
        import torch
        import torch.nn.functional as F
        from transformers.models.llama.modeling_llama import rotate_half

        device = self.pool[0][0].device
        ids, pos, slots, spans = [], [], [], []
        for r, chunk in batch:
            start = len(self.slot_tokens[r.slot])
            spans.append((len(ids), len(chunk), r.slot, start))
            ids += chunk
            pos += range(start, start + len(chunk))
            slots += [r.slot] * len(chunk)
        n = len(ids)
        ids_t = torch.tensor([ids], device=device)
        pos_t = torch.tensor([pos], device=device)
        slot_t, at_t = torch.tensor(slots, device=device), pos_t[0]
        lm = self.base.model
        h = lm.embed_tokens(ids_t)
        cos, sin = lm.rotary_emb(h, pos_t)
        cos, sin = cos[:, None], sin[:, None]  # [1, 1, n, head_dim]: over the heads
        masks = {}
        for length, start in {(ln, st) for _, ln, _, st in spans if ln > 1}:
            q = torch.arange(start, start + length, device=device)[:, None]
            masks[(length, start)] = torch.arange(start + length, device=device)[None, :] <= q
        h = h[0]
        n_q, n_kv = self.widths[0] // self.head_dim, self.widths[1] // self.head_dim
        for layer, (kc, vc), (qkv, o_proj, gate_up, down) in zip(lm.layers, self.pool, self.proj):
            attn = layer.self_attn
            qkv_out = qkv(layer.input_layernorm(h))
            # q and k rotated together (the same elementwise rule as transformers' apply_rotary_pos_emb)
            qk = qkv_out[:, :(n_q + n_kv) * self.head_dim].view(1, n, n_q + n_kv, self.head_dim).transpose(1, 2)
            qk = qk * cos + rotate_half(qk) * sin
            q, k = qk[:, :n_q], qk[:, n_q:]
            kc[slot_t, :, at_t] = k[0].transpose(0, 1)
            vc[slot_t, :, at_t] = qkv_out[:, (n_q + n_kv) * self.head_dim:].view(n, n_kv, self.head_dim)
            outs = []
            for off, length, slot, start in spans:
                end = start + length
                outs.append(F.scaled_dot_product_attention(
                    q[:, :, off:off + length], kc[slot:slot + 1, :, :end], vc[slot:slot + 1, :, :end],
                    attn_mask=masks.get((length, start)), scale=attn.scaling, enable_gqa=True))
            h = h + o_proj(torch.cat(outs, dim=2)[0].transpose(0, 1).reshape(n, -1))
            gate, up = gate_up(layer.post_attention_layernorm(h)).split(self.widths_mlp, dim=-1)
            h = h + down(layer.mlp.act_fn(gate) * up)
        last = torch.tensor([off + length - 1 for off, length, _, _ in spans], device=device)
        return self.head(lm.norm(h[last]))
