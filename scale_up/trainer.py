"""verl's PPO trainer with the kit's TB-GAE and critic inheritance: `TBGAETrainer`, registered as verl registers
trainers (`verl.trainer.ppo.v1.register_trainer`), chosen with `trainer.v1.trainer_mode=rsi_tbgae`.

Why a trainer and not only an estimator: verl's generic estimator hook passes no values (`compute_advantage` in
`verl/trainer/ppo/ray_trainer.py` builds the call from rewards, mask, config and group ids), and the v1
trainer fetches a fixed list of fields for the advantage step, the agent loop's extra fields not among them.
The trainer's `_compute_advantage` is replaced here: verl's own field store (TransferQueue), rollout
correction (`compute_rollout_correction_and_add_to_batch`) and nested/padded conversions, the kit's estimator
in the middle (`advantage_fields`, the part the CPU tests run on batches verl's code builds).

Critic inheritance (the paper's critic carries over from RPR-1 to RPR-2): verl's `_load_checkpoint` loads a
critic only when resuming the same run (`trainer.resume_mode`), and a fresh start builds it from
`critic.model.path`, a Hugging Face model directory. `trainer.rsi_critic_from` (a verl checkpoint's
`global_step_N` directory of the previous phase) loads that phase's critic, weights and optimizer state, at a
fresh start, with verl's own `critic_wg.load_checkpoint`; a resumed run loads its own as before.
"""

from __future__ import annotations

import os

import numpy as np

from .estimator import TURN_REWARDS, compute_tb_gae_advantage, register

ESTIMATOR = "tb_gae"
TRAINER = "rsi_tbgae"


def _extra(value) -> list[dict]:
    """The agent loop's extra-field dicts, one per row, from what the field store returns for them."""
    if value is None:
        return []
    if hasattr(value, "tolist"):
        value = value.tolist()
    return [v if isinstance(v, dict) else {} for v in value]


def advantage_fields(data, algorithm, extra_fields=None) -> dict:
    """{'advantages', 'returns'}: [B, R] padded tensors, from a verl batch whose `batch` holds the padded
    `response_mask`, `values` and `token_level_rewards` (a `verl.DataProto`), by the kit's TB-GAE with
    `algorithm.gamma` / `algorithm.lam` as its per-turn discount and trace decay. `extra_fields`: the rows'
    agent-loop extra fields; a row's `rsi_turn_rewards` gives it per-turn rewards."""
    extras = _extra(extra_fields)
    turn_rewards = [e.get(TURN_REWARDS) for e in extras] if extras else None
    adv, ret = compute_tb_gae_advantage(data.batch["token_level_rewards"], data.batch["response_mask"],
                                        config=algorithm, values=data.batch["values"], turn_rewards=turn_rewards)
    return {"advantages": adv, "returns": ret}


def _trainer_class():
    import transfer_queue as tq
    from tensordict import TensorDict
    from verl.protocol import DataProto
    from verl.trainer.ppo.rollout_corr_helper import compute_rollout_correction_and_add_to_batch
    from verl.trainer.ppo.v1 import PPOTrainerSync, register_trainer
    from verl.workers.utils.padding import response_to_nested

    @register_trainer(TRAINER)
    class TBGAETrainer(PPOTrainerSync):
        """`PPOTrainerSync` (colocated rollout and training) with the kit's TB-GAE and critic inheritance."""

        # verl's base trainer reads `self.trainer_mode` to choose between its sync and async machinery (the replay
        # buffer, one-prompt batch refills, transfer-queue checkpoints: v1/trainer_base.py); the config's
        # `trainer.v1.trainer_mode` name only picks this class from the registry, so the base must see "sync",
        # which this class is (with "rsi_tbgae" it built ReplayBufferAsync and a gen_batch_size of 1)
        trainer_mode = property(lambda self: "sync", lambda self, _name: None)

        def _compute_advantage(self, batch, metrics: dict):
            algo = self.config.algorithm
            if algo.adv_estimator != ESTIMATOR:
                return super()._compute_advantage(batch, metrics)
            if algo.use_kl_in_reward:
                raise ValueError("the paper's PPO has no KL term: set algorithm.use_kl_in_reward=False")
            fields = ["uid", "response_mask", "rm_scores", "rollout_log_probs", "old_log_probs", "values",
                      "extra_fields"]
            data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
            extra = data.pop("extra_fields") if "extra_fields" in data.keys() else None
            trainer_cfg = self.config.get("trainer", None) or {}
            write_trajectories(trainer_cfg.get("rsi_trajectory_dir", None), getattr(self, "global_steps", 0), extra)
            response_mask = data["response_mask"]
            data = DataProto(batch=data.to_padded_tensor())
            data.batch["token_level_rewards"] = data.batch["rm_scores"]
            data.non_tensor_batch["uid"] = np.array(data.batch.pop("uid").tolist(), dtype=object)

            corr = algo.get("rollout_correction", None)
            correct = corr is not None and "rollout_log_probs" in data.batch and not corr.get("bypass_mode", False)
            if correct:
                data, is_metrics = compute_rollout_correction_and_add_to_batch(data, corr)
                metrics.update(is_metrics)

            out = advantage_fields(data, algo, extra)
            names = ["advantages", "returns"]
            if correct:
                out["response_mask"] = data.batch["response_mask"]  # rejection sampling may have masked tokens
                names.append("response_mask")
                if "rollout_is_weights" in data.batch:
                    out["rollout_is_weights"] = data.batch["rollout_is_weights"]
                    names.append("rollout_is_weights")
            nested = TensorDict({k: response_to_nested(out[k], response_mask) for k in names}, batch_size=len(batch))
            return tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id, fields=nested)

        def _load_checkpoint(self):
            super()._load_checkpoint()
            source = self.config.trainer.get("rsi_critic_from", None)
            if source and self.global_steps == 0 and self.use_critic:
                self.critic_wg.load_checkpoint(local_path=inherited_critic_path(source),
                                               del_local_after_load=False)

    return TBGAETrainer


def write_trajectories(directory, step: int, extra_fields) -> str | None:
    """The step's episodes as the kit's trajectories, one JSON line each (the agent loop's `rsi_trajectory`
    extra field), in `directory/step-KKK.jsonl`, written beside and renamed; nothing without a directory."""
    lines = [e["rsi_trajectory"] for e in _extra(extra_fields) if e.get("rsi_trajectory")]
    if not directory or not lines:
        return None
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"step-{int(step):03d}.jsonl")
    with open(path + ".tmp", "w") as f:
        f.write("".join(line.rstrip("\n") + "\n" for line in lines))
    os.replace(path + ".tmp", path)
    return path


def latest_step_dir(source: str) -> str:
    """`source` itself, or where it is a verl run's `default_local_dir` (holding verl's
    latest_checkpointed_iteration.txt), its newest `global_step_N`."""
    marker = os.path.join(source, "latest_checkpointed_iteration.txt")
    if os.path.isfile(marker):
        with open(marker) as f:
            return os.path.join(source, f"global_step_{int(f.read().strip())}")
    return source


def inherited_critic_path(source: str) -> str:
    """The critic directory of a verl checkpoint: `source` is a `global_step_N` directory or its `critic/`, or
    a verl run's `default_local_dir` (its newest step's)."""
    source = latest_step_dir(os.path.abspath(source))
    path = source if os.path.basename(source) == "critic" else os.path.join(source, "critic")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"trainer.rsi_critic_from: no critic checkpoint at {path}")
    return path


def install():
    """Register the estimator and the trainer in verl's registries (idempotent); returns the trainer class."""
    register()
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY

    return TRAINER_REGISTRY.get(TRAINER) or _trainer_class()
