"""The kit's generation jobs on verl's standalone replicas (`scale_up.serve`, `kit_jobs.serving`), the parts that
run without GPUs: the replicas' config composed over the training config, the actor merged into one model
directory, servers.json, and the kit job's start / wait / stop of the server process. The replicas themselves
need GPUs and vLLM (not run here); the kit's side of the wire is tested against the kit's own server in
tests/policy/test_remote_engine.py.

Run (verl's environment): .venv-verl/bin/python -m pytest -q tests/scale_up/test_serve.py
"""

import json
import sys

import pytest

pytest.importorskip("verl")

from scale_up import kit_jobs, serve  # noqa: E402


def test_the_replicas_serve_the_training_rollout_from_disk_over_every_gpu(target_model_dir):
    from verl.utils.config import omega_conf_to_dataclass

    cfg = serve.serve_config(str(target_model_dir), nnodes=4, gpus_per_node=8)
    rollout = cfg.actor_rollout_ref.rollout
    assert cfg.actor_rollout_ref.model.path == str(target_model_dir) and rollout.load_format == "auto"
    assert rollout.name == "vllm" and rollout.logprobs_mode == "processed_logprobs"
    assert serve.replicas(cfg) == 32 // rollout.tensor_model_parallel_size
    omega_conf_to_dataclass(rollout)  # verl's own RolloutConfig takes it, as the replica class converts it
    odd = serve.serve_config(str(target_model_dir), nnodes=1, gpus_per_node=6)
    with pytest.raises(ValueError, match="6 GPUs do not split into replicas of tensor_model_parallel_size 4"):
        serve.replicas(odd)


def test_an_adapter_is_merged_into_one_model_directory_once(model_dir, tmp_path):
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    assert serve.merged_actor("base", model_dir, tmp_path) == model_dir
    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)
    lora = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                           init_lora_weights=False))  # B not zero: the adapter changes the logits
    lora.save_pretrained(tmp_path / "adapter")
    merged = serve.merged_actor(str(tmp_path / "adapter"), model_dir, tmp_path / "serve")
    assert merged == str(tmp_path / "serve" / "merged") and not (tmp_path / "serve" / "merged.tmp").exists()
    ids = torch.tensor([[1, 422, 2343, 314, 253, 1116]])
    with torch.no_grad():
        plain = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)(ids).logits.float()
        adapted = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16),
                                            str(tmp_path / "adapter"))(ids).logits.float()
        served = AutoModelForCausalLM.from_pretrained(merged, dtype=torch.bfloat16)(ids).logits.float()
    moved = (adapted - plain).abs().max().item()
    assert moved > 0.5 and (served - adapted).abs().max().item() < moved / 10  # the adapter's weights, merged
    stamp = (tmp_path / "serve" / "merged" / "config.json").stat().st_mtime_ns
    assert serve.merged_actor(str(tmp_path / "adapter"), model_dir, tmp_path / "serve") == merged
    assert (tmp_path / "serve" / "merged" / "config.json").stat().st_mtime_ns == stamp  # made once
    with pytest.raises(FileNotFoundError, match="adapter_config.json"):
        serve.merged_actor(str(tmp_path / "nothing"), model_dir, tmp_path / "other")


STAND_IN = """
import json, os, sys, time
out = sys.argv[1]
if sys.argv[2] == "die":
    print("vLLM: CUDA out of memory", flush=True)
    sys.exit(3)
tmp = os.path.join(out, "servers.json.tmp")
open(tmp, "w").write(json.dumps({"servers": ["10.0.0.1:8000"], "served_model": "/m", "init": "base", "model": "/m"}))
os.replace(tmp, os.path.join(out, "servers.json"))
time.sleep(600)
"""


def test_a_kit_job_starts_the_servers_waits_for_their_list_and_stops_them(tmp_path):
    where = tmp_path / "serve"
    with kit_jobs.serving(str(tmp_path), "base", "/m", where, argv=[sys.executable, "-c", STAND_IN, str(where), "ok"],
                          timeout=60) as servers:
        assert servers["servers"] == ["10.0.0.1:8000"]
    assert "servers" in json.loads((where / "servers.json").read_text())
    with pytest.raises(RuntimeError, match=r"(?s)exited \(3\).*CUDA out of memory"):
        with kit_jobs.serving(str(tmp_path), "base", "/m", where, argv=[sys.executable, "-c", STAND_IN, str(where),
                                                                          "die"], timeout=60):
            pass
    # a run whose cycle.json says no servers: none started
    (tmp_path / "cycle.json").write_text(json.dumps({"run": str(tmp_path), "model": "/m", "serve": False}))
    with kit_jobs.serving(str(tmp_path), "base", "/m", where) as servers:
        assert servers is None
    # without the field, CycleConfig's default (servers) holds, as CycleConfig.read would read it
    for saved in ({"run": str(tmp_path), "model": "/m", "serve": True}, {"run": str(tmp_path), "model": "/m"}):
        (tmp_path / "cycle.json").write_text(json.dumps(saved))
        with pytest.raises(ValueError, match="cycle.json: field.s. verl_python, nnodes, gpus_per_node missing"):
            with kit_jobs.serving(str(tmp_path), "base", "/m", where):
                pass


def test_the_remote_route_loads_nothing_here_and_refuses_another_actor():
    from rsi_lite.rollout.engine import RolloutConfig
    from scale_up.loading import plan_job

    servers = {"servers": ["10.0.0.1:8000"], "served_model": "/m", "init": "rsr-1/checkpoint", "model": "/m"}
    how = plan_job("rewrite", "rsr-1/checkpoint", "/m", RolloutConfig(batch_size=64), servers=servers)
    assert how.loading.route == "remote" and how.rollout.generation_backend == "remote" and how.memory is None
    assert how.rollout.batch_size == 64 and how.record()["servers"] == servers
    with pytest.raises(ValueError, match="serves 'rsr-1/checkpoint', the job starts from 'base'"):
        how.load("base", "/m")
    with pytest.raises(ValueError, match="cannot run on remote servers"):
        plan_job("serve", "base", "/m", RolloutConfig(), servers=servers)
