"""verl's PPO entry point with the kit's parts registered: `python -m scale_up.main [hydra overrides]`.

The config is scale_up/configs/rsi_27b.yaml (verl's ppo_trainer underneath). This process registers the
kit's estimator and trainer (`scale_up.trainer.install`), and so does every Ray worker before verl looks them
up by name (the config's `ray_kwargs.ray_init.runtime_env.worker_process_setup_hook`); verl's own `main`
(its config checks, Ray, the v1 trainer) does the rest.

    python -m scale_up.main trainer.experiment_name=rpr-1 data.train_files=RUN/tasks/train.parquet
    python -m scale_up.main ... trainer.rsi_critic_from=RUN/verl/rpr-1/global_step_20   # RPR-2: the inherited critic
"""

from __future__ import annotations

import hydra


@hydra.main(config_path="configs", config_name="rsi_27b", version_base=None)
def main(config) -> None:
    from verl.trainer.main_ppo import main as verl_main

    from .trainer import install

    install()
    verl_main(config)  # a Hydra main given its config runs on it as it is


if __name__ == "__main__":
    main()
