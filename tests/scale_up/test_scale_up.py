"""scale_up: FSDP2 over two CPU processes gives the one-process losses of the kit's own SFT step and PPO
update; the 27B dry-run plan fits its GPUs.  Run: pytest tests/scale_up/test_scale_up.py
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import REPO


def _run(cmd, out):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    r = subprocess.run(cmd + ["--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, _why(r)
    return json.loads(out.read_text())


def _why(r) -> str:
    """A failed launch's cause: each rank's error lines (torchrun prefixes them `[rankN]:`; an abort prints
    `terminate called ...` or a signal name), which the launcher's own long tail would push out, then that tail."""
    import re

    key = [line for line in r.stderr.splitlines()
           if re.search(r"^\[rank\d+\]|Error|Traceback|terminate called|Signal|SIG[A-Z]+|what\(\)", line)]
    return f"exit {r.returncode}\n" + "\n".join(key[:80]) + "\n--- last lines ---\n" + r.stderr[-1500:]


def test_fsdp2_two_processes_match_one_process(tmp_path):
    single = _run([sys.executable, "-m", "scale_up.fsdp_check"], tmp_path / "single.json")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    sharded = _run(torchrun + ["-m", "scale_up.fsdp_check"], tmp_path / "sharded.json")
    assert (single["world"], sharded["world"]) == (1, 2)
    assert sharded["sft"] == pytest.approx(single["sft"], rel=1e-4, abs=1e-5)
    assert single["sft"][-1] < single["sft"][0]  # it trains
    for a, b in zip(sharded["ppo"], single["ppo"]):
        assert a == pytest.approx(b, rel=1e-4, abs=1e-5)
    # the two updates move it by ~5e-3 (from -6.2790): the ranks' and the one process's moves agree to ~1e-7
    assert sharded["actor_logprob_after_ppo"] == pytest.approx(single["actor_logprob_after_ppo"], abs=1e-6)


def test_fsdp2_bf16_two_processes_match_one_process_within_bf16_error(tmp_path):
    """A bfloat16 base: FSDP2 computes in bf16 (the float32 adapters cast for the all-gather), reduces in
    float32; one process computes the adapters in float32. They agree to bf16's precision, not to float32's."""
    cmd = ["-m", "scale_up.fsdp_check", "--dtype", "bfloat16"]
    single = _run([sys.executable] + cmd, tmp_path / "single.json")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    sharded = _run(torchrun + cmd, tmp_path / "sharded.json")
    assert single["dtype"] == sharded["dtype"] == "bfloat16"
    assert sharded["sft"] == pytest.approx(single["sft"], rel=2e-2)
    assert single["sft"][-1] < single["sft"][0]
    for a, b in zip(sharded["ppo"], single["ppo"]):
        assert a["losses/value"] == pytest.approx(b["losses/value"], rel=2e-2, abs=1e-3)
        assert a["losses/policy"] == pytest.approx(b["losses/policy"], rel=5e-2, abs=2e-2)
    assert sharded["actor_logprob_after_ppo"] == pytest.approx(single["actor_logprob_after_ppo"], abs=1e-3)  # move ~5e-3


def test_whitening_across_ranks_equals_one_process_whitening(tmp_path):
    """Each rank whitens its share with all-reduced moments: gathered, that is the one-process whitening of
    the whole batch, and not what whitening each share on its own gives."""
    import torch

    from rsi_lite.algos.ppo import masked_whiten
    from scale_up.fsdp_check import WHITEN_MASK, WHITEN_ROWS

    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    sharded = _run(torchrun + ["-m", "scale_up.fsdp_check"], tmp_path / "sharded.json")
    x, m = torch.tensor(WHITEN_ROWS), torch.tensor(WHITEN_MASK)
    whole = masked_whiten(x, m)
    assert torch.allclose(torch.tensor(sharded["whitened"]), whole, atol=1e-6)
    per_share = torch.cat([masked_whiten(x[:1], m[:1]), masked_whiten(x[1:], m[1:])])
    assert not torch.allclose(per_share, whole, atol=1e-2)


def test_27b_architecture_built_on_meta_and_sharded_over_2_processes(tmp_path):
    """The plan's 27B model (Qwen2 architecture, LoRA actor and critic, bf16) built on the meta device and
    sharded by FSDP2 over 2 gloo processes: each rank holds about half the parameter bytes, nothing was ever
    allocated (every shard still on meta), and the process never grew anywhere near the model's size."""
    from scale_up.plan import Plan

    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    doc = _run(torchrun + ["-m", "scale_up.load_check", "meta"], tmp_path / "meta.json")
    total = doc["total_bytes"]
    assert total > 50 * 1024 ** 3  # ~27 B parameters in bf16
    plan = Plan.from_dict(json.loads((REPO / "scale_up/configs/qwen27b_32xh100.json").read_text()))
    assert doc["base_parameters"] == pytest.approx(plan.model.params(), rel=1e-3)  # the plan counts this model
    for r in doc["ranks"]:
        assert r["local_bytes"] == pytest.approx(total / 2, rel=0.01)
        assert r["all_on_meta"]
        assert r["peak_rss_bytes"] < 0.05 * total  # a few GB of Python and torch against ~55 GB of weights


def test_sharded_loading_reads_only_its_rows_and_equals_one_process_loading(tmp_path, small_random_model):
    """`load_sharded` over 2 processes (meta device -> fully_shard -> each rank reads its rows of the
    safetensors): the gathered model, adapters and value head equal one-process loading bit for bit, the
    log-probabilities and values agree, and each rank read about half the checkpoint."""
    import torch

    from rsi_lite.policy.actor import load_actor, save_actor
    from rsi_lite.policy.critic import add_critic, save_critic, token_logprobs, values
    from rsi_lite.rpr.stage import load_actor_critic

    model = str(small_random_model)
    pol = add_critic(load_actor("base", model=model))
    with torch.no_grad():  # non-trivial adapters and head: B is zero at init
        for n, p in pol.model.named_parameters():
            if "lora_B" in n:
                p.normal_(std=0.05)
        pol.value_head.weight.normal_(std=0.1)
    save_actor(pol, tmp_path / "actor")
    save_critic(pol, tmp_path / "critic")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    out = tmp_path / "sharded.pt"
    r = subprocess.run(torchrun + ["-m", "scale_up.load_check", "load", "--model", model, "--adapter",
                                   str(tmp_path / "actor"), "--critic", str(tmp_path / "critic"), "--out", str(out)],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, _why(r)
    sharded = torch.load(out, weights_only=False)

    one = load_actor_critic(str(tmp_path / "actor"), str(tmp_path / "critic"), model)
    state = one.model.state_dict()
    assert set(sharded["state"]) == set(state)
    for k, v in state.items():
        assert torch.equal(sharded["state"][k], v), k
    for k, v in one.value_head.state_dict().items():
        assert torch.equal(sharded["head"][k], v), k
    ids = torch.arange(3, 3 + 2 * 12).reshape(2, 12) % one.model.config.vocab_size
    with torch.no_grad():
        assert torch.allclose(sharded["logprobs"], token_logprobs(one, ids, torch.ones_like(ids)), atol=1e-5)
        assert torch.allclose(sharded["values"], values(one, ids, torch.ones_like(ids)), atol=1e-5)
    checkpoint = sum(f.stat().st_size for f in Path(model).glob("*.safetensors")) + \
        sum((tmp_path / d / "adapter_model.safetensors").stat().st_size for d in ("actor", "critic"))
    for rank in sharded["ranks"]:
        assert 0.4 * checkpoint < rank["bytes_read"] < 0.6 * checkpoint


def test_dry_run_plan_for_27b_on_32_gpus():
    r = subprocess.run([sys.executable, "-m", "scale_up.plan", "--config", "scale_up/configs/qwen27b_32xh100.json"],
                       cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert "per GPU" in r.stdout and "fits" in r.stdout
    doc = json.loads(r.stdout.split("JSON:", 1)[1])
    assert set(doc["memory_gb"]) == {"base", "trainable_states", "activations", "total"}
    assert doc["fits"] and doc["tokens_per_step"] > 0 and doc["dtype"] == "bfloat16"
    assert doc["sequence_tokens"] <= doc["max_sequence_tokens"]


def test_the_plan_computes_from_the_stage_configs_the_launcher_runs():
    """One schema: the plan's hyper-parameters are those of the RSR and RPR configs `scale_profile` gives the
    loop, and its memory follows them (a longer sequence needs more, and past the limit it does not fit)."""
    from dataclasses import replace

    from scale_up.launch import scale_profile
    from scale_up.plan import Plan, make_plan, max_sequence_tokens

    path = REPO / "scale_up/configs/qwen27b_32xh100.json"
    plan, p = Plan.load(path), scale_profile(path, "/models/x")
    doc = make_plan(plan)
    h = doc["hyperparameters"]
    assert h["batch"] == f"{p.rpr.batch_tasks} x {p.rpr.rollouts_per_task}" and p.rpr.batch_tasks == 256
    assert h["actor_lr"] == [p.rpr.actor_lr, p.rpr2_actor_lr] == [5e-7, 1e-7]
    assert h["ratio_clip"] == [p.rpr.ppo.ratio_low, p.rpr.ppo.ratio_high] == [0.7, 6.0]
    assert (h["K"], h["M"]) == (p.rsr.runbooks_per_success, p.rsr.resolves_per_runbook) == (4, 4)
    assert p.rpr.dtype == p.rsr.dtype == doc["dtype"] == "bfloat16" and p.rpr.batch_rule == "uniform"
    longest = max_sequence_tokens(plan)
    assert make_plan(replace(plan, sequence_tokens=longest - 100))["fits"]
    assert not make_plan(replace(plan, sequence_tokens=longest + 1000))["fits"]


def test_a_plan_config_with_an_unknown_field_is_named_with_its_file(tmp_path):
    from scale_up.plan import Plan

    bad = tmp_path / "plan.json"
    bad.write_text('{"context_parallel": 8}')
    with pytest.raises(ValueError, match=r"plan.json: unknown field\(s\) context_parallel"):
        Plan.load(bad)


# ---------------------------------------------------------------- the stage entry points and the launcher

def _pool(tmp_path):
    import shutil

    from ..conftest import REPO

    pool = tmp_path / "pool"
    for name in ("core-000-file_ops-easy", "core-001-file_ops-easy", "core-002-file_ops-easy", "core-003-file_ops-easy"):
        shutil.copytree(REPO / "tasks_mini" / "core" / name, pool / name)
    return pool


def _solution_examples(model_dir: Path, pool: Path) -> list[dict]:
    """One clean SFT example per pool task: the instruction, then its reference solution's command as the
    model's action, cleaned and tokenized by the RSR stage's own `build_example`."""
    from transformers import AutoTokenizer

    from rsi_lite.harness.messages import Message
    from rsi_lite.rsr.clean import build_example
    from rsi_lite.tasks import find_tasks

    from ..conftest import scripted_trajectory

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    rows = []
    for task in find_tasks(pool):
        cmd = (Path(task.path) / "solution" / "solve.sh").read_text().strip().splitlines()[-1]
        msgs = [Message("instruction", task.instruction), Message("action", f"```bash\n{cmd}\n```")]
        ex = build_example(tok, scripted_trajectory(tok, msgs, "plain", task.name, task.family), "resolve")
        assert ex.retokenizes
        rows.append(ex.to_dict())
    return rows


def test_distributed_stages_run_rsr_and_rpr_sharded_on_two_cpu_processes(tmp_path, bwrap_ok, monkeypatch,
                                                                          small_random_model):
    """RSR-1: `scale_up.generate rsr` (transformers) -> `torchrun -m scale_up.train sft` over 2 processes ->
    the laptop's run_rsr finishes the stage; RPR-1: per step `generate rpr` -> `torchrun ... train ppo`.
    On the small random model, so what is under test is the sharding and the hand-offs between jobs: the
    random model solves nothing, so the stage is given its training set as a resumed run finds it on disk
    (the tasks' reference solutions as clean examples); its discovery, review and re-solve steps still run
    here, and test_rsr.py runs them on the bundled model."""
    from rsi_lite.records import write_jsonl_atomic
    from rsi_lite.rpr.config import RPRConfig
    from rsi_lite.rpr.stage import load_actor_critic
    from rsi_lite.rsr.config import RSRConfig
    from rsi_lite.rsr.sft import SFTConfig
    from scale_up.launch import DistributedStages, LocalLauncher

    from ..conftest import REPO

    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pool, run, model = _pool(tmp_path), tmp_path / "run", str(small_random_model)
    stages = DistributedStages(LocalLauncher(nodes=1, gpus=2, vllm=False))
    rsr = RSRConfig(model=model, pool=str(pool), discovery_harnesses=["exemplar"], discovery_samples=1,
                    planner="extractive", runbooks_per_success=1, resolves_per_runbook=2,
                    sft=SFTConfig(epochs=1, batch_size=1))
    rsr.rollout.temperature, rsr.rollout.max_turns, rsr.rollout.max_new_tokens = 0.0, 2, 24
    d = run / "rsr-1"
    d.mkdir(parents=True)
    write_jsonl_atomic(d / "dataset.jsonl", _solution_examples(small_random_model, pool))
    (d / "dataset_meta.json").write_text('{"retokenize_failures": 0}')
    funnel = stages.rsr(run, 1, rsr, False)
    assert funnel["discovery_episodes"] == 4 and funnel["examples"] == 4, funnel  # two per rank
    assert (d / "checkpoint" / "adapter_config.json").is_file() and (d / "DONE").is_file()
    sft = json.loads((d / "sft.json").read_text())
    assert sft["world"] == 2 and sft["steps"] >= 1 and sft["first_loss"] > 0

    rpr = RPRConfig(model=model, pool=str(pool), init=str(d / "checkpoint"), warmup_tasks=2, warmup_epochs=1,
                    batch_tasks=2, minibatch=1, calibration_steps=1, steps=1)
    rpr.rollout.max_turns, rpr.rollout.max_new_tokens = 1, 24
    summary = stages.rpr(run, 1, rpr, "rpr-1", False)
    r = run / "rpr-1"
    assert summary["phases"] == {"warmup": 1, "calibration": 1, "joint": 1} and (r / "DONE").is_file()
    rows = [json.loads(x) for x in (r / "metrics.jsonl").read_text().splitlines()]
    assert [m["world"] for m in rows] == [2, 2, 2] and "losses/policy" in rows[-1]
    assert (r / "step-002" / "optim-rank1.pt").is_file()
    pol = load_actor_critic(str(r / "actor"), str(r / "critic"), model)  # what the sharded run saved loads whole
    assert pol.value_head is not None


def test_merge_shards_restores_batch_order(tmp_path):
    from rsi_lite.rollout.trajectory import Trajectory, read_trajectories, write_trajectories
    from scale_up.launch import merge_shards

    def traj(i):
        return Trajectory(task=f"t{i}", task_path="", suite="", family="", difficulty="", harness="plain",
                          action_format="bash", policy="", seed=0, system="", messages=[], token_ids=[],
                          action_mask=[], logprobs=[], turn_spans=[], finish_reason="", turns=0, verifier={},
                          rewards={}, tokens={}, timings={})

    batch = [traj(i) for i in range(5)]
    for s in range(2):
        write_trajectories(batch[s::2], tmp_path / f"rollouts.part-{s}-of-2.jsonl")
        (tmp_path / f"rollout.part-{s}-of-2.json").write_text(json.dumps({"rollout_s": 3.0 + s}))
    merge_shards(tmp_path, 2)
    assert [t.task for t in read_trajectories(tmp_path / "rollouts.jsonl")] == [f"t{i}" for i in range(5)]
    assert json.loads((tmp_path / "rollout.json").read_text())["rollout_s"] == 4.0


def test_vllm_backend_says_what_is_missing_without_vllm():
    import importlib.util

    from scale_up.generate import make_policy

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here: the GPU check runs it")
    with pytest.raises(RuntimeError, match="vllm"):
        make_policy("smollm2-135m", None, use_vllm=True)


@pytest.mark.parametrize("script,launcher", [("scale_up/jobs/slurm.sbatch", "slurm"), ("scale_up/jobs/ray_job.sh", "ray")])
def test_job_scripts_pass_flags_the_launcher_parses(script, launcher):
    """The launcher command line a job script runs, with its variables filled in as the scheduler would and a
    user's extra flags appended ("$@"), parsed by the launcher's own parser: every flag exists and lands."""
    import re
    import shlex

    from scale_up.launch import build_parser

    text = "\n".join(x for x in (REPO / script).read_text().splitlines() if not x.lstrip().startswith("#"))
    assert subprocess.run(["bash", "-n", str(REPO / script)]).returncode == 0
    line = re.search(r"python -m scale_up\.launch (.*?\"\$@\")", text.replace("\\\n", " "), re.S).group(1)
    env = {"RUN": "/shared/runs/x", "MODEL": "/shared/models/base", "CONFIG": "scale_up/configs/qwen27b_32xh100.json",
           "SLURM_NNODES": "4", "SLURM_GPUS_ON_NODE:-8": "8", "NODES": "4", "GPUS": "8"}
    for k, v in sorted(env.items(), key=lambda kv: -len(kv[0])):
        line = line.replace("${" + k + "}", v).replace("$" + k, v)
    argv = shlex.split(line.replace('"$@"', "--resume --control direct-ppo --seeds 0 1"))
    a = build_parser().parse_args(argv)
    assert (a.launcher, a.run, a.model, a.nodes, a.nproc) == (launcher, "/shared/runs/x", "/shared/models/base", 4, 8)
    assert (REPO / a.config).is_file() and a.resume and a.control == ["direct-ppo"] and a.seeds == [0, 1]


def test_gpu_check_training_steps_run_on_cpu_with_the_tiny_model(tmp_path):
    """`scale_up/gpu_check.sh`'s training step, as the GPU machine would run it, on 2 CPU processes and the
    tiny random model: sharded bf16 loading, FSDP2 SFT steps whose loss falls, a PPO update; each step reports
    `CHECK <name> ok`. (Its vLLM step needs CUDA: the device check runs it.)"""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    model = tmp_path / "model"
    r = subprocess.run([sys.executable, "-m", "scale_up.gpu_check", "model", "--out", str(model), "--size", "tiny"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, _why(r)
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    r = subprocess.run(torchrun + ["-m", "scale_up.gpu_check", "train", "--model", str(model), "--out",
                                   str(tmp_path / "train.json"), "--examples", "4", "--length", "64"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    for check in ("sharded_load", "fsdp2_bf16_sft", "fsdp2_bf16_ppo"):
        assert f"CHECK {check} ok" in r.stdout, r.stdout[-2000:]
    doc = json.loads((tmp_path / "train.json").read_text())
    assert doc["world"] == 2 and doc["sft_losses"][-1] < doc["sft_losses"][0]
