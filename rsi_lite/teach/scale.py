"""Notebook 07's views of the 27B memory plan (`scale_up.memory.plan`): the plan's terms drawn per phase,
predict-then-check questions answered by the plan under a changed setting, and the checkers of its exercises
(per-GPU training states under FSDP, a vLLM replica's KV cache). The plan function, its architecture
and the config are passed in as values: the library never imports scale_up.
"""

from __future__ import annotations

import copy
import math
import random


def override(cfg: dict, changes: dict) -> dict:
    """A copy of a config read as nested dicts (`scale_up.settings.read_config`) with `changes` ({dotted path:
    value}) set, as a Hydra override on the command line would."""
    out = copy.deepcopy(cfg)
    for path, value in changes.items():
        *head, last = path.split(".")
        node = out
        for part in head:
            node = node.setdefault(part, {})
        node[last] = value
    return out


MEMORY_QUESTIONS = {
    "rollout-peaks": ("On 80 GB GPUs, generation (vLLM awake beside the resident training states) needs more memory "
                      "per GPU than the actor's update", {}),
    "unfused-fits": ("Without fused log-probability kernels the actor's update still fits on an 80 GB GPU",
                     {"actor_rollout_ref.model.use_fused_kernels": False}),
    "sixteen-gpus-fit": ("On 2 nodes of 8 GPUs (16 in all) in place of 4 nodes, every phase still fits on 80 GB",
                         {"trainer.nnodes": 2}),
}
"""Key -> (statement, the settings it changes): notebook 07's predict-then-check questions, each True or False."""


def memory_answers(plan, cfg: dict, arch, gpu_gb: float = 80.0, source: str = "scale_up.memory.plan") -> dict:
    """Each of `MEMORY_QUESTIONS` answered by `plan` (`scale_up.memory.plan`) on `cfg` with its changes, in the
    form `teach.exercises.check_predictions` takes."""
    base = plan(cfg, arch, gpu_gb)
    out = {}
    for key, (question, changes) in MEMORY_QUESTIONS.items():
        p = plan(override(cfg, changes), arch, gpu_gb)
        if key == "rollout-peaks":
            answer = base["rollout_gb"] > base["actor_train_gb"]
        elif key == "unfused-fits":
            answer = p["actor_train_gb"] <= gpu_gb
        else:
            answer = p["fits"]
        figures = (f"rollout {p['rollout_gb']:.1f} GB, actor update {p['actor_train_gb']:.1f} GB, critic update "
                   f"{p['critic_train_gb']:.1f} GB per GPU on {p['gpus']} GPUs")
        out[key] = {"question": question, "answer": answer, "figures": figures, "source": source + " (estimated)"}
    return out


def memory_terms(p: dict) -> dict[str, dict[str, float]]:
    """Phase -> term -> GB per GPU, from one plan: what the plan adds up for each phase."""
    states = {"actor base (frozen)": p["actor_base_gb"], "actor LoRA states": p["actor_lora_states_gb"],
              "critic states": p["critic_states_gb"]}
    act = {f"activations: {k.replace('_', ' ')}": v for k, v in p["actor_activation_terms"].items()}
    critic_act = {"activations: critic pass": p["critic_activations_gb"]}
    vllm = {"vLLM weights": p["vllm_weights"], "vLLM KV cache and the rest": p["vllm_total"] - p["vllm_weights"]}
    return {"rollout": {**states, **vllm}, "actor update": {**states, **act}, "critic update": {**states, **critic_act}}


def memory_figure(plans: dict[str, tuple[dict, float]]):
    """Stacked bars per phase, one panel per plan (`plans`: title -> (plan, the GPU's GB)), with the GPU's size
    drawn as a line: where a bar passes the line, that phase does not fit."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(plans), subplot_titles=list(plans), shared_yaxes=True)
    seen = set()
    for col, (p, gpu_gb) in enumerate(plans.values(), start=1):
        terms = memory_terms(p)
        phases = list(terms)
        names = list(dict.fromkeys(n for t in terms.values() for n in t))
        for name in names:
            fig.add_trace(go.Bar(x=phases, y=[terms[ph].get(name, 0.0) for ph in phases], name=name,
                                 legendgroup=name, showlegend=name not in seen), row=1, col=col)
            seen.add(name)
        fig.add_hline(y=gpu_gb, line_dash="dash", line_color="red", row=1, col=col,
                      annotation_text=f"{gpu_gb:.0f} GB GPU")
    fig.update_layout(barmode="stack", yaxis_title="GB per GPU (estimated)")
    return fig


def agree(label: str, by_hand: float, from_plan: float, unit: str = "GB", rel: float = 1e-9) -> str:
    """One line: a term worked by hand beside the plan's, and whether they agree (to `rel`)."""
    ok = abs(by_hand - from_plan) <= rel * max(abs(by_hand), abs(from_plan), 1e-12)
    fmt = (lambda x: f"{x:,.0f}") if unit in ("", "tokens", "bytes", "parameters") else (lambda x: f"{x:.3f}")
    return (f"{label:34} by hand {fmt(by_hand):>16} {unit:10} scale_up.memory {fmt(from_plan):>16}  "
            + ("agree" if ok else "DIFFER"))


# ---------------------------------------------------------------- 07 · the 27B memory plan, per GPU

SHAPES = [(64, 5120, 22016, 40, 8), (28, 3584, 18944, 28, 4), (32, 4096, 11008, 32, 32), (48, 5120, 13824, 40, 8),
          (80, 8192, 29568, 64, 8)]
"""(layers, hidden, intermediate, heads, KV heads) of dense decoder shapes the memory checkers vary over; the
first is notebook 07's target."""


def _set(cfg, path: str, value) -> None:
    *head, last = path.split(".")
    for part in head:
        cfg = cfg[part]
    cfg[last] = value


def _memory_cases(arch, cfg, rng: random.Random, trials: int, vary):
    """(arch, cfg, gpu_gb) variants: the target as configured first, then random ones (`vary(cfg, rng)` sets the
    settings a checker is about)."""
    import dataclasses

    yield arch, cfg, 80.0
    for _ in range(trials):
        layers, hidden, inter, heads, kv = rng.choice(SHAPES)
        a = dataclasses.replace(arch, layers=layers, hidden=hidden, intermediate=inter, heads=heads, kv_heads=kv,
                                vocab=rng.choice([arch.vocab, 32000, 128256]))
        c = copy.deepcopy(cfg)
        vary(c, rng)
        yield a, c, rng.choice([40.0, 80.0, 141.0])


def _near(got, want: float, rel: float = 1e-6) -> bool:
    try:
        return math.isclose(float(got), want, rel_tol=rel, abs_tol=1e-9)
    except (TypeError, ValueError):
        return False


def check_fsdp_states(fn, plan, arch, cfg, trials: int = 30, seed: int = 0) -> tuple[bool, str]:
    """`fn(params, lora_params, gpus, base_bytes) -> GB per GPU`: the training states every GPU holds under FSDP
    (full sharding over all `gpus`): the LoRA actor's frozen base at `base_bytes` a parameter, its `lora_params`
    adapter weights trained with an fp32 master, an fp32 gradient and Adam's two fp32 moments, and the full-weight
    critic trained the same way; GB = 1e9 bytes. Checked against `plan` (`scale_up.memory.plan`, passed in since
    the library never imports scale_up) as its `actor_states_gb + critic_states_gb`, on `cfg` (the 27B config) and
    `arch` (its architecture, `scale_up.memory.Arch`) and variants of both: GPU count, LoRA rank, the base's dtype,
    the model's shape."""
    def vary(c, rng):
        _set(c, "trainer.nnodes", rng.choice([1, 2, 4, 8, 16]))
        _set(c, "trainer.n_gpus_per_node", rng.choice([4, 8]))
        _set(c, "actor_rollout_ref.model.lora_rank", rng.choice([8, 16, 64, 128]))
        _set(c, "actor_rollout_ref.actor.fsdp_config.model_dtype", rng.choice(["bf16", "fp32"]))
        _set(c, "critic.model.lora_rank", 0)

    mistakes = {  # what a usual mistake computes, to name it when the learner's answer matches it
        "not sharded: every GPU holds 1/gpus of the states under FSDP": lambda P, T, W, b: (b * P + 16 * T + 16 * P) / 1e9,
        "GiB (2**30) in place of GB (1e9)": lambda P, T, W, b: (b * P + 16 * T + 16 * P) / W / 2**30,
        "Adam states for the frozen base: it has no gradient and no optimizer state": lambda P, T, W, b: (16 * P + 16 * T + 16 * P) / W / 1e9,
        "the critic without its gradient and Adam's moments: it is trained, 16 bytes a parameter": lambda P, T, W, b: (b * P + 16 * T + 4 * P) / W / 1e9,
        "the adapters at the base's bytes: they train, 16 bytes a parameter": lambda P, T, W, b: (b * P + b * T + 16 * P) / W / 1e9,
        "no critic: PPO trains a value model of the same size beside the actor": lambda P, T, W, b: (b * P + 16 * T) / W / 1e9,
    }
    rng = random.Random(seed)
    for i, (a, c, gb) in enumerate(_memory_cases(arch, cfg, rng, trials, vary)):
        p = plan(c, a, gb)
        want = p["actor_states_gb"] + p["critic_states_gb"]
        P, W = a.params(), p["gpus"]
        T = a.lora_params(c["actor_rollout_ref"]["model"]["lora_rank"])
        b = {"bf16": 2, "fp32": 4}[c["actor_rollout_ref"]["actor"]["fsdp_config"]["model_dtype"]]
        try:
            got = fn(P, T, W, b)
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        if not _near(got, want):
            named = [m for m, f in mistakes.items() if _near(got, f(P, T, W, b))]
            return False, (f"case {i}: params={P:,} lora_params={T:,} gpus={W} base_bytes={b}\n"
                           f"  expected {want:.4f} GB per GPU\n  got      {got}"
                           + (f"\n  that is the answer with this mistake: {named[0]}" if named else ""))
    return True, f"correct on {trials + 1} configurations (the 27B config first)"


def check_kv_tokens(fn, plan, arch, cfg, trials: int = 30, seed: int = 0) -> tuple[bool, str]:
    """`fn(layers, kv_heads, head_dim, params, gpu_gb, utilization, tp) -> tokens`: how many tokens of KV cache one
    vLLM replica (tensor parallel over `tp` GPUs) holds while it generates: on each of its GPUs, the share
    `utilization` of `gpu_gb` less its 1/tp of the bf16 weights (none if the weights do not fit), over the bytes one
    token's K and V take in every layer (bf16), for the whole replica. Checked (to one token) against `plan`'s
    `kv_cache_tokens_per_replica` (`scale_up.memory.plan`, passed in) on `cfg` and `arch` and variants."""
    def vary(c, rng):
        _set(c, "actor_rollout_ref.rollout.tensor_model_parallel_size", rng.choice([1, 2, 4, 8]))
        _set(c, "actor_rollout_ref.rollout.gpu_memory_utilization", rng.choice([0.5, 0.6, 0.85, 0.9]))

    def tokens(L, kv, hd, P, gb, u, t, *, k_and_v=2, cache_bytes=2, kv_heads=None, per_replica=True, unit=1e9,
               weights=True):
        free = max(0.0, u * gb - (2 * P / t / unit if weights else 0)) * unit * (t if per_replica else 1)
        return free / (k_and_v * L * (kv_heads or kv) * hd * cache_bytes)

    rng = random.Random(seed)
    for i, (a, c, gb) in enumerate(_memory_cases(arch, cfg, rng, trials, vary)):
        want = plan(c, a, gb)["kv_cache_tokens_per_replica"]
        r = c["actor_rollout_ref"]["rollout"]
        args = (a.layers, a.kv_heads, a.hidden // a.heads, a.params(), gb, r["gpu_memory_utilization"],
                r["tensor_model_parallel_size"])
        try:
            got = fn(*args)
        except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"not yet: {type(e).__name__}: {e}"
        try:
            g = float(got)
        except (TypeError, ValueError):
            g = None
        if g is None or abs(g - want) > 1:
            mistakes = {"every attention head in place of the KV heads (grouped-query attention shares them)":
                        dict(kv_heads=a.heads), "K alone: the cache holds K and V": dict(k_and_v=1),
                        "an fp32 cache: vLLM keeps it in the model's bf16": dict(cache_bytes=4),
                        "one GPU's cache: a replica spans tp GPUs": dict(per_replica=False),
                        "GiB (2**30) in place of GB (1e9)": dict(unit=2**30),
                        "the weights forgotten: they take part of vLLM's share": dict(weights=False)}
            named = [m for m, kw in mistakes.items() if g is not None and abs(g - tokens(*args, **kw)) <= 1]
            return False, (f"case {i}: layers={args[0]} kv_heads={args[1]} head_dim={args[2]} params={args[3]:,} "
                           f"gpu_gb={gb} utilization={args[5]} tp={args[6]}\n  expected {want:,} tokens\n  got      {got}"
                           + (f"\n  that is the answer with this mistake: {named[0]}" if named else ""))
    return True, f"correct on {trials + 1} configurations (the 27B config first)"
