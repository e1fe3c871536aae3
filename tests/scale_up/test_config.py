"""The paper's settings as a verl config (scale_up/configs/rsi_27b.yaml): composed by Hydra over verl's own
ppo_trainer.yaml, checked by verl's own config checks, and its loss settings computed by verl's own loss
functions against the kit's `rsi_lite.algos.ppo`.

Run (verl's environment, `make verl-env`):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_config.py
"""

from pathlib import Path

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[2] / "scale_up" / "configs"


@pytest.fixture(scope="module")
def cfg(target_model_dir):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose(config_name="rsi_27b", overrides=[f"actor_rollout_ref.model.path={target_model_dir}"])


def test_verls_own_checks_pass(cfg):
    from omegaconf import OmegaConf
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    assert need_critic(cfg)  # critic.enable: the estimator is not "gae"
    assert not need_reference_policy(cfg)  # no KL anywhere, so no reference model is built
    # every check of verl's validate_config; its last one (a LoRA rank vLLM accepts) imports vLLM, which is
    # CUDA-only, and runs only when the rollout is named vllm: named otherwise here, that one is left out
    checked = OmegaConf.merge(cfg, {"actor_rollout_ref": {"rollout": {"name": "sglang"}}})
    validate_config(checked, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    assert cfg.actor_rollout_ref.model.lora_rank in (8, 16, 32, 64, 128, 256)  # vLLM's MaxLoRARanks
    algo = omega_conf_to_dataclass(cfg.algorithm, dataclass_type=AlgoConfig)
    assert algo.adv_estimator == "tb_gae" and algo.rollout_correction.rollout_is == "token"
    rollout = cfg.actor_rollout_ref.rollout
    assert rollout.prompt_length + rollout.response_length == 262144 == rollout.max_model_len


def test_the_papers_settings(cfg):
    a = cfg.actor_rollout_ref.actor
    assert (1 - a.clip_ratio_low, 1 + a.clip_ratio_high) == pytest.approx((0.7, 6.0))
    assert a.entropy_coeff == 0 and not a.use_kl_loss and not cfg.algorithm.use_kl_in_reward
    assert a.loss_agg_mode == "token-mean" and a.use_dynamic_bsz and a.ulysses_sequence_parallel_size > 1
    assert cfg.critic.use_dynamic_bsz and cfg.critic.ulysses_sequence_parallel_size > 1
    assert cfg.algorithm.rollout_correction.rollout_is_threshold == 2.0
    # four critic-only steps: verl's first step is step 1 and the actor updates once critic_warmup <= step
    assert [s for s in range(1, 10) if not cfg.trainer.critic_warmup <= s] == [1, 2, 3, 4]
    assert cfg.critic.model.lora_rank == 0
    assert cfg.critic.optim.lr == 1.5e-5
    # a LoRA actor at about ten times the paper's full-weight 5e-7
    assert cfg.actor_rollout_ref.model.lora_rank > 0 and cfg.actor_rollout_ref.actor.optim.lr == pytest.approx(5e-6)


def test_the_trainer_and_the_hook_resolve(cfg):
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.utils.import_utils import load_class_from_fqn

    hook = cfg.ray_kwargs.ray_init.runtime_env.worker_process_setup_hook
    install = load_class_from_fqn(hook, "setup hook") if "." in hook else None
    assert callable(install)
    trainer = install()
    assert get_trainer_cls(cfg.trainer.v1.trainer_mode) is trainer
    # verl's base reads the mode to pick its sync or async machinery: this sync trainer's base must see "sync"
    # (as verl's __init__ sets it from the config), and so build the sync replay buffer
    from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync

    t = trainer.__new__(trainer)
    t.config, t.trainer_mode = cfg, cfg.trainer.v1.trainer_mode
    assert cfg.trainer.v1.trainer_mode != "sync" and t.trainer_mode == "sync"
    buffer = t._build_replay_buffer()
    assert isinstance(buffer, ReplayBuffer) and not isinstance(buffer, ReplayBufferAsync)


def _loss_inputs():
    g = torch.Generator().manual_seed(1)
    old = -torch.rand(3, 9, generator=g) * 3
    # ratios from 0.05 to 20: far outside 0.7 / 6.0 both ways
    new = old + torch.linspace(-3.0, 3.0, 27).reshape(3, 9)
    adv = torch.randn(3, 9, generator=g)
    mask = torch.ones(3, 9)
    mask[0, 6:] = 0
    mask[2, :2] = 0
    return old, new, adv, mask


def test_verls_policy_loss_with_these_settings_is_the_kits(cfg):
    """Dual clip out of reach: negative-advantage tokens with ratio > 6 are not capped, as in the kit."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.core_algos import compute_policy_loss_vanilla
    from verl.utils.config import omega_conf_to_dataclass

    from rsi_lite.algos.ppo import policy_loss

    actor = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor)
    old, new, adv, mask = _loss_inputs()
    assert ((new - old).exp() > 3.0)[adv < 0].any()  # where verl's default dual clip (3.0) would cap
    verl_loss, _ = compute_policy_loss_vanilla(old, new, adv, mask, "token-mean", actor)
    kit_loss, _ = policy_loss(new, old, adv, mask, ratio_low=0.7, ratio_high=6.0)
    assert float(verl_loss) == pytest.approx(float(kit_loss), rel=1e-6)
    # and verl's defaults are not the kit's objective: the test can tell them apart
    default = omega_conf_to_dataclass(OmegaConf.merge(cfg.actor_rollout_ref.actor, {"clip_ratio_c": 3.0}))
    capped, _ = compute_policy_loss_vanilla(old, new, adv, mask, "token-mean", default)
    assert float(capped) != pytest.approx(float(kit_loss), rel=1e-3)


def test_verls_value_loss_with_these_settings_is_the_kits(cfg):
    from verl.trainer.ppo.core_algos import compute_value_loss

    from rsi_lite.algos.ppo import value_loss

    old, new, ret, mask = _loss_inputs()
    vpreds, values = new * 2, old  # predictions far from the old values: a clip of 0.5 would bite
    got, _ = compute_value_loss(vpreds, ret, values, mask, cfg.critic.cliprange_value, "token-mean")
    assert float(got) == pytest.approx(float(value_loss(vpreds, ret, mask)), rel=1e-6)
    clipped, _ = compute_value_loss(vpreds, ret, values, mask, 0.5, "token-mean")  # verl's default clip
    assert float(clipped) != pytest.approx(float(got), rel=1e-3)


def _compose(name, *overrides):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose(config_name=name, overrides=list(overrides))


def _differences(a, b, where=""):
    """The dotted paths where two plain nested dicts differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {d for k in set(a) | set(b) for d in _differences(a.get(k), b.get(k), f"{where}.{k}".lstrip("."))}
    return set() if a == b else {where}


def test_the_critic_warmup_is_its_own_phase_over_the_same_config(cfg, target_model_dir, tmp_path):
    """The warm-up (rsi_27b.yaml with `scale_up.cycle.warmup_overrides`): verl's own checks pass, the actor never
    updates in it (verl updates the actor once critic_warmup <= step), one pass over the warm-up tasks in whole
    batches, and nothing else differs from rsi_27b."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    from rsi_lite.loop.profiles import profile
    from scale_up.cycle import CycleConfig, warmup_overrides

    rows = profile("gpu").rpr.warmup_tasks  # 64, fewer than a PPO step's 256 tasks
    warm = _compose("rsi_27b", f"actor_rollout_ref.model.path={target_model_dir}",
                    *warmup_overrides(CycleConfig(run=str(tmp_path), model=target_model_dir)),
                    "trainer.experiment_name=rpr-1-warmup", "data.train_files=tasks/warmup.parquet")
    checked = OmegaConf.merge(warm, {"actor_rollout_ref": {"rollout": {"name": "sglang"}}})  # as above: no vLLM
    validate_config(checked, use_reference_policy=need_reference_policy(warm), use_critic=need_critic(warm))
    assert need_critic(warm) and warm.trainer.total_epochs == 1 and not warm.trainer.rsi_critic_from
    # verl's v1 trainer (trainer_base: a drop_last dataloader, steps_per_epoch = rows // train_batch_size) runs
    # the warm-up's rows as one whole batch: at rsi_27b's 256 it would run no step at all
    assert rows // cfg.data.train_batch_size == 0 and rows // warm.data.train_batch_size == 1
    # the critic trains on them as the kit's warm-up does: mini-batches of RPRConfig.minibatch, warmup_epochs passes
    rpr = profile("gpu").rpr
    assert warm.actor_rollout_ref.actor.ppo_mini_batch_size == rows
    assert (warm.critic.ppo_mini_batch_size, warm.critic.ppo_epochs) == (rpr.minibatch, rpr.warmup_epochs) == (8, 2)
    # a warm-up of any length a run could have never reaches the actor's first update
    assert not [s for s in range(1, 100_000) if warm.trainer.critic_warmup <= s]
    a = OmegaConf.to_container(cfg, resolve=False)
    b = OmegaConf.to_container(warm, resolve=False)
    assert _differences(a, b) == {"data.train_files", "trainer.critic_warmup", "trainer.total_epochs",
                                  "trainer.experiment_name", "data.train_batch_size",
                                  "actor_rollout_ref.actor.ppo_mini_batch_size", "critic.ppo_mini_batch_size",
                                  "critic.ppo_epochs"}
    # more rows than a step's: steps of 256, as the PPO phases take them
    more = warmup_overrides(CycleConfig(run=str(tmp_path), model=target_model_dir, warmup_tasks=600))
    assert "data.train_batch_size=256" in more
    # the rows the tasks job wrote, where it has run (a filtered pool can hold fewer than configured)
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "tasks.json").write_text('{"warmup": {"path": "w.parquet", "rows": 40}}')
    assert "data.train_batch_size=40" in warmup_overrides(CycleConfig(run=str(tmp_path), model=target_model_dir))
    # after the user's overrides for every PPO job, which cannot bring the zero-step warm-up back
    from scale_up.cycle import rpr_jobs

    user = CycleConfig(run=str(tmp_path), model=target_model_dir, overrides=["data.train_batch_size=256"])
    argv = rpr_jobs(user, 1, ("RSR-1", "base"))[0].argv
    assert argv.index("data.train_batch_size=40") > argv.index("data.train_batch_size=256")


def test_the_sft_config_builds_verls_sft_parts_on_the_kits_dataset(target_model_dir, tmp_path):
    """configs/rsi_sft.yaml over verl's sft_trainer_engine.yaml: verl's own dataclasses (model, engine, optimizer,
    checkpoint: their checks run as they are built, as `SFTTrainer._build_config` builds them) accept it, and
    verl's dataset factory given its data section builds the kit's `KitSFTDataset` on a dataset.jsonl."""
    import json

    from verl.trainer.sft_trainer import create_sft_dataset
    from verl.utils.config import omega_conf_to_dataclass

    from scale_up.sft_data import KitSFTDataset

    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps({"task": f"t{i}", "input_ids": [5, 6, 7, 8], "loss_mask": [0, 0, 1, 1]})
                            + "\n" for i in range(3)))
    sft = _compose("rsi_sft", f"model.path={target_model_dir}", f"data.train_files={path}")
    model = omega_conf_to_dataclass(sft.model)
    engine, optim = omega_conf_to_dataclass(sft.engine), omega_conf_to_dataclass(sft.optim)
    omega_conf_to_dataclass(sft.checkpoint)
    assert model.lora_rank == 64 and model.lora_alpha == 32 and engine.ulysses_sequence_parallel_size == 8
    assert optim.lr == pytest.approx(2e-4) and sft.data.max_length == 262144
    rpr = _compose("rsi_27b", f"actor_rollout_ref.model.path={target_model_dir}").actor_rollout_ref.model
    # the SFT trains the adapter the RPR phases train: the same rank, alpha and target modules
    assert (model.lora_rank, model.lora_alpha, model.target_modules) == (rpr.lora_rank, rpr.lora_alpha,
                                                                          rpr.target_modules)
    ds = create_sft_dataset(sft.data.train_files, sft.data, model.tokenizer, None)
    assert isinstance(ds, KitSFTDataset) and len(ds) == 3
    assert ds[0]["input_ids"].tolist() == [5, 6, 7, 8] and ds[0]["loss_mask"].tolist() == [0, 0, 1, 1]


def test_the_episode_settings_are_the_kits_rollout_config(cfg):
    """The `rsi` section is the kit's `RolloutConfig` (same fields and meanings) plus the reward and the policy
    name; the fields verl decides (sampling, batching) are refused there rather than silently ignored."""
    from rsi_lite.rollout.engine import RolloutConfig
    from scale_up.agent_loop import VERL_OWNS, RSIEpisodeConfig

    ep = RSIEpisodeConfig.from_config(cfg.rsi)
    assert isinstance(ep, RolloutConfig) and ep.max_turns == 64 and ep.reward == "spr"
    assert ep.context_budget == cfg.actor_rollout_ref.rollout.max_model_len
    assert set(VERL_OWNS) < {f for f in RolloutConfig().to_dict()}
    with pytest.raises(ValueError, match="verl's to set"):
        RSIEpisodeConfig.from_config({**cfg.rsi, "temperature": 0.6})
    with pytest.raises(ValueError, match="not a field"):
        RSIEpisodeConfig.from_config({"max_turn": 3})
