"""One refinement stage's settings (`RPRConfig`): written to `DIR/rpr-N/config.json`, read back on resume."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..algos.advantages import ESTIMATORS
from ..algos.ppo import PPOConfig
from ..algos.rewards import REWARDS
from ..rollout.engine import RolloutConfig


@dataclass
class RPRConfig:
    """One refinement stage."""

    init: str = "base"
    """The actor to start from: 'base' or an adapter directory (RSR's checkpoint; `--from base` is the control)."""
    model: str = "smollm2-135m"
    """The base model: the bundled alias or a local Hugging Face directory."""
    dtype: str = "float32"
    """The base model's precision (`PolicyConfig.dtype`): float32 on a laptop CPU, bfloat16 at scale."""
    critic_from: str = ""
    """A saved critic to inherit (the previous RPR stage's `critic/`); empty: a fresh critic."""
    pool: str = ""
    """Training tasks; empty: the run's generated pool (DIR/pool, shared with RSR)."""
    pool_size: int = 360
    """Tasks of the generated pool."""
    pool_difficulty: list[str] = field(default_factory=list)
    """Use only pool tasks of these difficulties (empty: all), as `RSRConfig.pool_difficulty`."""
    pool_families: list[str] = field(default_factory=list)
    """Use only pool tasks of these families (empty: all), as `RSRConfig.pool_families`."""
    batch_rule: str = "frontier"
    """Which tasks a batch is drawn from, a key of `rsi_lite.rpr.batches.BATCH_RULES`: 'frontier' (tasks the current
    actor solves sometimes but not always, `rsi_lite.rpr.frontier`), 'kinds' (distinct tasks of the kinds it solves
    sometimes, `rpr.frontier.draw_by_kind`; the probe tasks are held out of its batches) or 'uniform' (the paper's:
    a fixed shuffle of the pool, 256 tasks x 1 rollout there). Checked when the stage starts (`run_rpr`), not
    here: the rules' module imports this one."""
    window: int = 4
    """frontier: a task's success rate is that of its last `window` training-rollout verdicts."""
    kind_window: int = 16
    """kinds: a kind's success rate is that of its last `kind_window` verdicts."""
    explore: float = 0.25
    """frontier, kinds: share of each batch given to tasks outside the frontier (never seen first), so it can grow."""
    rollouts_per_task: int = 1
    """Episodes of each drawn task in a batch (the paper: 1)."""
    probe_samples: int = 2
    """Probes: each pool task (up to `probe_tasks`) rolled out this many times with the training rollout settings
    before the first step, after every `probe_every` joint steps and after the last: the pool's own success
    rate, step by step (the same seeds each time, so two probes differ only by the actor), and the first
    verdicts of the frontier rule. 0: no probes (the frontier then starts from the steps' own verdicts)."""
    probe_every: int = 0
    """Joint steps between probes (0: only before the first step and after the last)."""
    probe_tasks: int = 64
    """At most this many pool tasks are probed, evenly spaced through the pool."""
    warmup_tasks: int = 16
    """Tasks of the critic warm-up (from the pool: the kit's swr suite is an evaluation suite, never trained on)."""
    warmup_epochs: int = 2
    """Critic passes over the warm-up rollouts."""
    calibration_steps: int = 4
    """Critic-only steps on fresh training batches before joint updates."""
    steps: int = 8
    """Joint actor-critic PPO steps."""
    batch_tasks: int = 8
    """B: tasks per step, one rollout each."""
    minibatch: int = 4
    """Trajectories per gradient step."""
    ppo_epochs: int = 1
    """Passes over each batch."""
    accumulate: int = 1
    """Minibatches whose gradients add up before one optimizer step (0: the whole batch). Minibatches group
    episodes of similar length, and length goes with the outcome (failures run longer), so a step per
    minibatch can be a step on failures alone: with Adam, whose step size hardly depends on the gradient's
    size, that pushes down every token they share with the successes. Accumulating over the batch makes
    each step weigh the batch's successes and failures together (token-weighted, as one big minibatch)."""
    reward: str = "spr"
    """The reward PPO trains on: a key of `rsi_lite.algos.rewards.REWARDS` ('s', 'fdr' or 'spr')."""
    reward_timing: str = "final"
    """'final' (the paper's): the episode's reward on its last action token. 'turn': the workspace is verified
    after every action (`RolloutConfig.verify_turns`) and each action earns the change in reward it made
    (`rpr.update.turn_reward_deltas`; the same total, potential-based shaping): an action that breaks a passing
    workspace is charged for it, and the idle actions after a success are not credited with it."""
    shadow_flags: bool = True
    """Replay each step's successes in their tasks' shadow twins and run the pattern checks
    (`verify.shadow.success_flags`): each success's `verifier["flags"]`, and the step's `success/flagged` share."""
    flagged_as_failure: bool = False
    """Reward a flagged success as the failure it may be (its rewards recomputed with strict = 0; the final
    reward only, so with reward_timing 'final'). Off by default: the flags are logged, the paper's reward kept."""
    estimator: str = "tb_gae"
    """The advantage estimator: a key of `rsi_lite.algos.advantages.ESTIMATORS` ('tb_gae', the paper's, or 'gae',
    token-level)."""
    gamma_turn: float = 1.0
    """Discount at a turn boundary (per token for 'gae')."""
    lam_turn: float = 0.95
    """Trace decay at a turn boundary (per token for 'gae')."""
    actor_lr: float = 1e-4
    """Actor LoRA learning rate, from the lr sweep in docs/experiments.md (a tenth of it barely moves the ratio;
    twice it, with a step per minibatch, unlearned what the self-rewrite taught; the profiles pair it with
    `accumulate` 0)."""
    critic_lr: float = 5e-4
    """Critic LoRA + value head learning rate (faster than the actor's, as the paper's)."""
    gradient_checkpointing: bool = True
    """Recompute each layer's activations during backward instead of keeping them: one more forward's compute for
    a fraction of the memory (`checkpointing`). Off is faster where memory allows (short episodes, minibatch 2)."""
    checkpoint_tokens: int = 2048
    """With `gradient_checkpointing` off, a minibatch whose padded size (rows x its widest episode) passes this
    many tokens is checkpointed anyway, so that one long episode cannot take a step past a laptop's memory
    (`rpr.update.checkpointed`; measured in docs/experiments.md). 0: never."""
    max_grad_norm: float = 1.0
    """Global gradient-norm clip, per optimizer."""
    seed: int = 0
    """Seed of the task draw, the rollouts' sampling and the minibatch order."""
    report_to: str = "none"
    """'tensorboard': every step's and probe's numbers also to DIR/rpr-N/tensorboard/ (`rsi_lite.tracking`)."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """Loss settings (clip 0.7 / 6.0, no KL, no entropy)."""
    rollout: RolloutConfig = field(default_factory=lambda: RolloutConfig(harness="plain", temperature=1.0,
                                                                         max_turns=3, max_new_tokens=64))
    """Training rollouts: the plain harness at temperature 1 (the training forward's distribution)."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RPRConfig":
        d = dict(d)
        d["ppo"] = PPOConfig(**d.get("ppo", {}))
        d["rollout"] = RolloutConfig(**d.get("rollout", {}))
        return cls(**d)

    def __post_init__(self):
        if self.reward not in REWARDS:
            raise ValueError(f"RPRConfig.reward: {self.reward!r} is not one of {', '.join(REWARDS)}")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"RPRConfig.estimator: {self.estimator!r} is not one of {', '.join(ESTIMATORS)}")
        if self.flagged_as_failure and (self.reward_timing != "final" or not self.shadow_flags):
            raise ValueError("RPRConfig.flagged_as_failure needs shadow_flags and reward_timing 'final' (it recomputes "
                             "the final reward of a flagged success)")
