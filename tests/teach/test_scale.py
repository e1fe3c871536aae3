"""Notebook 07's views of the memory plan: overrides copy the config, the questions are the plan's, the drawn terms
add up to the plan's phases. Run: pytest tests/teach/test_scale.py (the kit's environment: scale_up.memory needs
no verl)
"""

import pytest

from rsi_lite.teach.scale import MEMORY_QUESTIONS, memory_answers, memory_figure, memory_terms, override


@pytest.fixture(scope="module")
def memory():
    from scale_up.memory import TARGET, Arch, plan
    from scale_up.settings import read_config

    return plan, Arch.from_config(TARGET), read_config()


def test_override_copies_and_sets():
    cfg = {"a": {"b": 1, "c": {"d": 2}}}
    out = override(cfg, {"a.c.d": 3, "a.e": 4})
    assert out == {"a": {"b": 1, "c": {"d": 3}, "e": 4}} and cfg == {"a": {"b": 1, "c": {"d": 2}}}


def test_the_answers_are_the_plans(memory):
    plan, arch, cfg = memory
    a = memory_answers(plan, cfg, arch)
    assert set(a) == set(MEMORY_QUESTIONS)
    base = plan(cfg, arch, 80)
    assert a["rollout-peaks"]["answer"] == (base["rollout_gb"] > base["actor_train_gb"])
    unfused = plan(override(cfg, {"actor_rollout_ref.model.use_fused_kernels": False}), arch, 80)
    assert a["unfused-fits"]["answer"] == (unfused["actor_train_gb"] <= 80) and not unfused["fits"]
    sixteen = plan(override(cfg, {"trainer.nnodes": 2}), arch, 80)
    assert sixteen["gpus"] == 16 and a["sixteen-gpus-fit"]["answer"] == sixteen["fits"]
    assert "on 16 GPUs" in a["sixteen-gpus-fit"]["figures"] and "estimated" in a["rollout-peaks"]["source"]
    # a GPU too small for anything turns the fits-questions False
    small = memory_answers(plan, cfg, arch, gpu_gb=40)
    assert small["unfused-fits"]["answer"] is False and small["sixteen-gpus-fit"]["answer"] is False


def test_the_drawn_terms_add_up_to_the_phases(memory):
    plan, arch, cfg = memory
    for gb in (80, 141):
        p = plan(cfg, arch, gb)
        terms = memory_terms(p)
        assert sum(terms["rollout"].values()) == pytest.approx(p["rollout_gb"])
        assert sum(terms["actor update"].values()) == pytest.approx(p["actor_train_gb"])
        assert sum(terms["critic update"].values()) == pytest.approx(p["critic_train_gb"])
    fig = memory_figure({"80": (plan(cfg, arch, 80), 80.0), "141": (plan(cfg, arch, 141), 141.0)})
    names = [t.name for t in fig.data if t.showlegend]
    assert len(names) == len(set(names)) and "critic states" in names


def test_agree_says_when_a_term_differs():
    from rsi_lite.teach.scale import agree

    assert agree("P", 27_227_395_072, 27_227_395_072, "parameters").endswith("agree")
    assert "27,227,395,072" in agree("P", 27_227_395_072, 27_227_395_072, "parameters")
    assert agree("states", 15.549, 15.55).endswith("DIFFER") and agree("x", 1.0, 1.0 + 1e-12).endswith("agree")
