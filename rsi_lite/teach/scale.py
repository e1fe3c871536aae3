"""Notebook 07's views of the 27B memory plan (`scale_up.memory.plan`): the plan's terms drawn per phase, and
predict-then-check questions answered by the plan under a changed setting. The plan function, its architecture
and the config are passed in as values: the library never imports scale_up.
"""

from __future__ import annotations

import copy


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
