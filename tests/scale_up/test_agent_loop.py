"""The terminal episode as a verl agent loop (`scale_up.agent_loop.TerminalAgentLoop`), run for real: a
bubblewrap sandbox on a mini task, the kit's harness, verifier and rewards, the replies from a generation server
that is the kit's own engine in a separate process of the kit's environment (`scale_up.kit_server serve`,
reached through `KitServerClient`, the `generate` of verl's `LLMServerClient`), the bundled model greedy. The
same episode through the kit's own rollout engine (`scale_up.kit_server episode`, `run_episodes`) is the
reference: ids, mask, log-probabilities, messages and rewards must be equal, and verl's own packing of the
output (`AgentLoopOutput.as_dict`) must carry them.

Needs the kit's environment beside verl's (`make venv verl-env`): its python is $RSI_LITE_KIT_PYTHON, else
.venv/bin/python. Run:
    RSI_LITE_KIT_PYTHON=.venv/bin/python .venv-verl/bin/python -m pytest -q tests/scale_up/test_agent_loop.py
"""

import asyncio
import json
import subprocess
import sys
import time

import pytest

pytest.importorskip("verl")

from .conftest import REPO, kit_env, kit_python

TASK = REPO / "tasks_mini" / "core" / "core-000-file_ops-easy"
EPISODE = {"harness": "plain", "action_format": "bash", "max_turns": 2, "max_new_tokens": 40,
           "context_budget": 2048, "command_timeout": 20.0, "verifier_mode": "fresh", "verify_turns": True}
KIT_ONLY = {"temperature": 0.0, "top_p": 1.0, "stop_after_block": False, "batch_size": 1, "open_episodes": 1,
            "generation_backend": "transformers"}


@pytest.fixture(scope="module")
def kit_server(model_dir, tmp_path_factory):
    from scale_up.agent_loop import KitServerClient

    where = tmp_path_factory.mktemp("server")
    port_file, log = where / "port", open(where / "server.log", "w")
    proc = subprocess.Popen([kit_python(), "-m", "scale_up.kit_server", "serve", "--model", model_dir,
                             "--port-file", str(port_file), "--context-budget", str(EPISODE["context_budget"])],
                            env=kit_env(), cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not port_file.exists():
            if proc.poll() is not None:
                pytest.fail(f"the kit server exited: {(where / 'server.log').read_text()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail("the kit server did not start in 300 s")
            time.sleep(0.5)
        yield KitServerClient(f"http://127.0.0.1:{port_file.read_text()}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def kit_trajectory(model_dir, tmp_path_factory):
    from rsi_lite.rollout.trajectory import Trajectory

    out = tmp_path_factory.mktemp("kit") / "traj.json"
    subprocess.run([kit_python(), "-m", "scale_up.kit_server", "episode", "--model", model_dir, "--task", str(TASK),
                    "--seed", "0", "--out", str(out), "--rollout", json.dumps({**EPISODE, **KIT_ONLY})],
                   env=kit_env(), cwd=REPO, check=True, timeout=600)
    return Trajectory.from_json(out.read_text())


def _agent_loop(server, model_dir, episode=None):
    """verl's agent loop object as verl's worker builds it (`AgentLoopWorker._run_agent_loop`)."""
    import hydra
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    config = OmegaConf.create({
        "rsi": {**EPISODE, **(episode or {})},
        "actor_rollout_ref": {"rollout": {"prompt_length": 1024, "response_length": 4096}},
        "data": {"apply_chat_template_kwargs": {}, "mm_processor_kwargs": {}},
    })
    loops = OmegaConf.load(REPO / "scale_up" / "configs" / "agent_loops.yaml")
    entry = next(e for e in loops if e.name == "rsi_terminal")
    return hydra.utils.instantiate({"_target_": entry._target_}, trainer_config=DictConfigWrap(config),
                                   server_manager=server, tokenizer=AutoTokenizer.from_pretrained(model_dir),
                                   processor=None, hf_model_type="llama", dataset_cls=RLHFDataset,
                                   data_config=DictConfigWrap(config.data))


GREEDY = {"temperature": 0.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}


def test_the_agent_loop_episode_equals_the_kits(kit_server, kit_trajectory, model_dir, bwrap_ok):
    from rsi_lite.rollout.trajectory import Trajectory

    loop = _agent_loop(kit_server, model_dir)
    out = asyncio.run(loop.run(dict(GREEDY), extra_info={"task_path": str(TASK)}, session_id=0, uid="u0",
                               raw_prompt=[]))
    kit = kit_trajectory
    assert kit.turns >= 1 and sum(kit.action_mask) > 0  # a real episode: the model spoke
    assert out.prompt_ids + out.response_ids == kit.token_ids
    assert [0] * len(out.prompt_ids) + out.response_mask == kit.action_mask
    assert len(out.prompt_ids) < kit.turn_spans[0][0]  # the first reply's header is the response's first tokens
    assert out.response_logprobs == pytest.approx(kit.logprobs[len(out.prompt_ids):], abs=1e-4)
    assert out.reward_score == kit.rewards["spr"]
    ours = Trajectory.from_json(out.extra_fields["rsi_trajectory"])
    assert ours.messages == kit.messages and ours.turn_spans == kit.turn_spans
    assert ours.rewards == kit.rewards and ours.verifier["strict"] == kit.verifier["strict"]
    assert out.extra_fields["rsi_turn_rewards"] == kit.turn_rewards["spr"]
    # verl's own packing of the output (what its agent-loop worker puts into the field store)
    row = out.as_dict()
    assert row["prompts"].tolist() + row["responses"].tolist() == kit.token_ids
    assert float(row["rm_scores"].sum()) == pytest.approx(kit.rewards["spr"])


def test_each_episode_is_seeded_on_its_own(kit_server, model_dir, bwrap_ok):
    """rollout.n samples of one task: each session its own seeds, so the server samples them independently."""
    from scale_up.agent_loop import episode_seed, sample_key

    sent = []

    class Recording:
        async def generate(self, request_id, *, prompt_ids, sampling_params, **kw):
            sent.append(dict(sampling_params))
            return await kit_server.generate(request_id, prompt_ids=prompt_ids, sampling_params=sampling_params)

    loop = _agent_loop(Recording(), model_dir, {"max_turns": 1, "verify_turns": False})
    sampled = {**GREEDY, "temperature": 1.0}

    async def both():
        return await asyncio.gather(*[loop.run(dict(sampled), extra_info={"task_path": str(TASK)}, session_id=s,
                                               uid="u0", raw_prompt=[]) for s in (0, 1)])

    a, b = asyncio.run(both())
    assert a.prompt_ids == b.prompt_ids  # the same prompt twice
    assert len({s["seed"] for s in sent}) == len(sent) == 2
    assert a.response_ids != b.response_ids  # sampled independently
    assert episode_seed(0, TASK.name, sample_key(0, 1)) != episode_seed(0, TASK.name, sample_key(1, 0))
    assert episode_seed(0, TASK.name, sample_key(0, 1)) == episode_seed(0, TASK.name, sample_key(0, 1))


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
