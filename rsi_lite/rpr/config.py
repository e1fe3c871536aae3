"""One refinement stage's settings (`RPRConfig`): written to `DIR/rpr-N/config.json`, read back on resume."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..algos.advantages import ESTIMATORS, GROUP_ESTIMATORS
from ..algos.ppo import PPOConfig
from ..algos.rewards import DEFAULT_ALPHA, REWARDS
from ..rollout.engine import RolloutConfig

ROLLOUT_CORRECTION = ("auto", "on", "off")
"""The values of `RPRConfig.rollout_correction`."""


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
    pool_kinds: list[str] = field(default_factory=list)
    """Use only pool tasks of these kinds (`tasks.spec.task_kind`; empty: all): `python -m rsi_lite.bench.learns`
    trains on the kinds its incoming checkpoint's probe found learnable, fixed before training."""
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
    probe_kind_episodes: int = 0
    """The kinds the first probe finds learnable (solved in some episodes, not all: what the kind rule trains on)
    get more episodes of their probe tasks, new seeds, until each kind has at least this many, in that probe and
    in every later one (the same episodes each time, `rpr.batches.kind_topup`): the kinds PPO trains on measured
    on enough episodes to show them rise, at the price of those kinds alone. 0: no more than `probe_samples`."""
    warmup_tasks: int = 16
    """Tasks of the critic warm-up (from the pool: the kit's swr suite is an evaluation suite, never trained on):
    ceil(warmup_tasks / batch_tasks) warm-up steps, their batches drawn by the batch rule (the uniform rule sets
    these tasks aside from training, `warmup_split`). Only a fresh critic is warmed up (a stage with
    `critic_from` starts at its calibration steps, `rpr.batches.schedule`)."""
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
    fold_old_pass: bool = True
    """Where the first epoch is one optimizer step (`accumulate` 0, or at least as many as the epoch has
    minibatches), its forwards see the weights the rollout used, so they are the "old" pass: the critic's values
    and the actor's log-probabilities are read from them instead of from two extra forwards over the batch
    (`rpr.update.folds_old_pass`, which also needs no reference KL and no dropout). The same update to float
    precision (tests/rpr/test_update.py); off runs the separate old pass first, CleanRL's order."""
    reward: str = "spr"
    """The reward PPO trains on: a key of `rsi_lite.algos.rewards.REWARDS` ('s', 'fdr' or 'spr')."""
    reward_timing: str = "final"
    """'final' (the paper's): the episode's reward on its last action token. 'turn': the workspace is verified
    after every action (`RolloutConfig.verify_turns`) and each action earns the change in reward it made
    (`rpr.targets.turn_reward_deltas`; the same total, potential-based shaping): an action that breaks a passing
    workspace is charged for it, and the idle actions after a success are not credited with it."""
    unparsed_penalty: float = 0.0
    """p >= 0: each action the harness could not parse (no command, no done marker: it ran nothing) earns -p on
    its last token, beside the verifier's reward (`rpr.targets.batch_tensors`). 0: the paper's reward only. Why it
    exists: after a task is solved, or on the last allowed turn, what the actor writes changes nothing the verifier
    reads, so the final reward credits any reply there with the episode's outcome; the done marker, which a
    failure also ends with, is pushed down, and prose sampled at temperature 1 in successes is pushed up, until
    the actor stops ending its episodes cleanly (`eval.turns`, docs/experiments.md 2026-12-07). The penalty gives
    such replies a direction. A departure from the paper, whose reward is the verifier's alone. An episode's return
    is its reward minus p per unparsed reply, so a success keeps outscoring every failure (SPR's promise) only while
    p x (max_turns - 1) < 1 - alpha; the validation refuses a larger p. scale_up's verl path does not carry it."""
    shadow_flags: bool = True
    """Replay each step's successes in their tasks' shadow twins and run the pattern checks
    (`verify.shadow.success_flags`): each success's `verifier["flags"]`, and the step's `success/flagged` share."""
    flagged_as_failure: bool = False
    """Reward a flagged success as the failure it may be (its rewards recomputed with strict = 0; the final
    reward only, so with reward_timing 'final'). Off by default: the flags are logged, the paper's reward kept."""
    estimator: str = "tb_gae"
    """The advantage estimator: a key of `rsi_lite.algos.advantages.ESTIMATORS` ('tb_gae', the paper's, or 'gae',
    token-level), or of `GROUP_ESTIMATORS` ('rloo', 'grpo'): the critic-free control, each episode judged against
    the other `rollouts_per_task` episodes of its task in the same batch. A critic-free stage trains no critic:
    it needs `rollouts_per_task` >= 2 and no critic-only phases (`warmup_tasks` and `calibration_steps` 0)."""
    value_at: str = "token"
    """Where the critic's value enters the advantages: 'token' (the paper's and verl's): each action token's own;
    'turn': each turn's first action token's, shared by the turn's tokens (`algos.advantages.turn_start_values`),
    so every token of a turn gets one advantage and a critic that cannot yet tell tokens apart cannot make some
    tokens of a success negative (measured in docs/experiments.md, 2026-12-06). The critic still learns every
    token's value; a critic-based estimator only."""
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
    ref_kl: float = 0.0
    """Weight of a KL penalty to the actor the stage started from (`init`, kept frozen beside the actor:
    `policy.critic.add_reference`): beta * KL(pi || pi_init) per action token (the k3 estimate
    exp(d) - 1 - d, d = log pi_init - log pi, as verl's `low_var_kl`), added to the policy loss. 0 (the paper's):
    none. It holds the kinds the batches seldom draw where the incoming checkpoint had them, against the forgetting
    measured in docs/experiments.md; `kl/ref` (under the training forward) and `kl/ref_before` are logged."""
    replay: float = 0.0
    """Weight of a replay term, the kit's departure (InstructGPT's PPO-ptx in kind, with the self-rewrite's data in
    place of pretraining text): each actor optimizer step also lowers `replay` x the mean NLL, on their action
    tokens, of `replay_batch` examples of the incoming checkpoint's self-rewrite dataset (`replay_from`). It
    anchors what the batches do not draw: refinement from the cpu profile's seed-1 RSR-1 unlearned kinds near the
    trained ones, with a critic and without one alike (docs/experiments.md, 2026-12-07, session 7). 0 (the
    paper's): none. Logged: `losses/replay`, the replay examples' NLL before each step. scale_up's verl path does
    not carry it."""
    replay_batch: int = 4
    """Examples of the replay term per actor optimizer step, seeded by `seed` and the step (a resumed stage draws
    what the uninterrupted one would)."""
    replay_by: str = "example"
    """How the replay term draws its examples: "example" (each as often as the others, so a kind's share is its
    share of the dataset) or "kind" (each kind as often as the others, `rpr.replay`): a kind the self-rewrite kept
    2 examples of is anchored as firmly as one it kept 25 of, each of its examples replayed more often. Balanced
    per example, not per token: the NLL is a mean over the batch's action tokens, so longer examples weigh more."""
    replay_from: str = ""
    """The replay examples: a self-rewrite stage's `dataset.jsonl` (its `input_ids` and `loss_mask`); empty: the
    one beside `init` (RPR-N from RSR-N's `checkpoint`: `rsr-N/dataset.jsonl`)."""
    max_grad_norm: float = 1.0
    """Global gradient-norm clip, per optimizer."""
    seed: int = 0
    """Seed of the task draw, the rollouts' sampling and the minibatch order."""
    report_to: str = "none"
    """'tensorboard': every step's and probe's numbers also to DIR/rpr-N/tensorboard/ (`rsi_lite.tracking`)."""
    rollout_correction: str = "auto"
    """Truncated importance sampling on the rollout's own log-probabilities (`rsi_lite.algos.ppo.truncated_is_weights`,
    cap `ppo.tis_cap`): each action token's policy term weighted by min(pi_old / pi_rollout, C), where pi_rollout
    is the distribution the rollout engine drew the token from (what it recorded) and pi_old the training forward's
    before the update. 'on', 'off', or 'auto' (`rpr.targets.rollout_correction`), on when the two differ:

    - ctranslate2 or vllm served the rollout: another engine (merged and converted weights, its own kernels and
      precision) computes other probabilities than the training forward, more so at lower precision; on.
    - transformers or native at temperature 1 and top_p 1 (this stage's default): the rollout samples from the
      training forward's own model, weights and precision, so the recorded log-probabilities are pi_old's up to
      the rounding of a differently batched forward (native: also oneDNN's matmul kernels) (`logprobs/rollout_gap`;
      `python -m rsi_lite.bench.rollout_gap`, measured in docs/experiments.md); off, which keeps the plain PPO loss
      the weights would only perturb by that rounding.
    - transformers or native at another temperature or top_p < 1: the engine records the log-probabilities of the tempered,
      nucleus-cut distribution it sampled from, which differs from pi_old by construction. The surrogate is an
      expectation under pi_old and the tokens came from the behaviour distribution, which is exactly what
      importance sampling from the behaviour distribution corrects; on. What it cannot correct: tokens top-p cut
      were never drawn (no weight brings them back; inside the nucleus the weight is the nucleus's mass, the same
      for each token of a state); at temperature < 1 the rare tokens the engine under-sampled weigh up to C, the
      likely ones less than 1. The alternative the field also uses, training the tempered policy (the training
      forward's logits divided by the rollout temperature), changes what is trained; the kit trains pi at
      temperature 1.
    - greedy (temperature 0): the recorded log-probabilities are the plain softmax, pi_old's own, and a
      deterministic choice is no distribution to weight; off.

    Records from before `Trajectory.sampler` existed are judged by this config's `rollout` settings.
    `tis/on`, `tis/weight_mean` and `tis/truncated_frac` are logged every joint update (the weights' statistics
    also when off: what the correction would do)."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """Loss settings (clip 0.7 / 6.0, no KL, no entropy, the rollout correction's cap)."""
    rollout: RolloutConfig = field(default_factory=lambda: RolloutConfig(harness="plain", temperature=1.0,
                                                                         max_turns=3, max_new_tokens=64))
    """Training rollouts: the plain harness at temperature 1 (the training forward's distribution)."""

    @property
    def uses_critic(self) -> bool:
        """Whether the advantages come from a learned critic (TB-GAE, GAE) rather than the episode's group."""
        return self.estimator not in GROUP_ESTIMATORS

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
        if self.estimator not in ESTIMATORS and self.estimator not in GROUP_ESTIMATORS:
            raise ValueError(f"RPRConfig.estimator: {self.estimator!r} is not one of "
                             f"{', '.join([*ESTIMATORS, *GROUP_ESTIMATORS])}")
        if not self.uses_critic:
            if self.rollouts_per_task < 2:
                raise ValueError(f"RPRConfig.rollouts_per_task: {self.rollouts_per_task}; the estimator "
                                 f"{self.estimator!r} compares the episodes of one task, so it needs at least 2")
            if self.reward_timing != "final":
                raise ValueError(f"RPRConfig.reward_timing: {self.reward_timing!r}; the estimator {self.estimator!r} "
                                 "judges whole episodes, so it needs 'final'")
            if self.warmup_tasks or self.calibration_steps:
                raise ValueError(f"RPRConfig.warmup_tasks / calibration_steps: {self.warmup_tasks} / "
                                 f"{self.calibration_steps}; the estimator {self.estimator!r} has no critic to warm "
                                 "up, so both must be 0")
        if self.value_at not in ("token", "turn"):
            raise ValueError(f"RPRConfig.value_at: {self.value_at!r} is neither 'token' nor 'turn'")
        if self.value_at != "token" and not self.uses_critic:
            raise ValueError(f"RPRConfig.value_at: {self.value_at!r}; the estimator {self.estimator!r} reads no "
                             "critic's values")
        if self.ref_kl < 0:
            raise ValueError(f"RPRConfig.ref_kl: {self.ref_kl} is negative")
        if self.replay < 0 or self.replay_batch < 1:
            raise ValueError(f"RPRConfig.replay / replay_batch: {self.replay} / {self.replay_batch}; the weight must be "
                             "at least 0 and the batch at least 1")
        if self.replay_by not in ("example", "kind"):
            raise ValueError(f"RPRConfig.replay_by: {self.replay_by!r} is neither 'example' nor 'kind'")
        if self.unparsed_penalty < 0:
            raise ValueError(f"RPRConfig.unparsed_penalty: {self.unparsed_penalty} is negative (it is subtracted)")
        worst = self.unparsed_penalty * max(self.rollout.max_turns - 1, 1)
        if self.unparsed_penalty and self.reward == "spr" and worst >= 1 - DEFAULT_ALPHA:
            raise ValueError(f"RPRConfig.unparsed_penalty: {self.unparsed_penalty} x (max_turns - 1) = {worst:g} reaches "
                             f"1 - SPR's alpha ({1 - DEFAULT_ALPHA:g}), so a success with unparsed replies could score "
                             "below a failure")
        if self.unparsed_penalty and not self.uses_critic:
            raise ValueError(f"RPRConfig.unparsed_penalty: {self.unparsed_penalty}; the estimator {self.estimator!r} "
                             "judges whole episodes by their reward, so a per-turn penalty cannot reach it")
        if self.rollout_correction not in ROLLOUT_CORRECTION:
            raise ValueError(f"RPRConfig.rollout_correction: {self.rollout_correction!r} is not one of "
                             f"{', '.join(ROLLOUT_CORRECTION)}")
        if self.flagged_as_failure and (self.reward_timing != "final" or not self.shadow_flags):
            raise ValueError("RPRConfig.flagged_as_failure needs shadow_flags and reward_timing 'final' (it recomputes "
                             "the final reward of a flagged success)")
