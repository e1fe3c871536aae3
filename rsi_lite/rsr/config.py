"""One self-rewrite stage's settings (`RSRConfig`): written to `DIR/rsr-N/config.json`, read back on resume."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..rollout.engine import RolloutConfig
from .sft import SFTConfig


@dataclass
class RSRConfig:
    """One self-rewrite stage."""

    init: str = "base"
    """The actor to start from: 'base' or a saved adapter directory (the previous stage's checkpoint)."""
    model: str = "smollm2-135m"
    """The base model: the bundled alias or a local Hugging Face directory."""
    dtype: str = "float32"
    """The base model's precision (`PolicyConfig.dtype`): float32 on a laptop CPU, bfloat16 at scale."""
    pool: str = ""
    """Directory of training tasks; empty: the generated pool (`rsi-lite tasks pool`) of `pool_size` tasks in DIR."""
    pool_size: int = 360
    """Tasks of the generated pool."""
    pool_difficulty: list[str] = field(default_factory=list)
    """Use only pool tasks of these difficulties (empty: all); e.g. ['easy'] where the model solves little else."""
    pool_families: list[str] = field(default_factory=list)
    """Use only pool tasks of these families (empty: all); a curriculum for a model that solves one or two."""
    discovery_harnesses: list[str] = field(default_factory=lambda: ["exemplar", "state_machine", "verifier_feedback",
                                                                    "plain"])
    """The complementary harnesses that look for successes."""
    discovery_samples: int = 2
    """Episodes per task and harness."""
    retry_samples: int = 0
    """A second discovery pass: this many more episodes per harness for every task that no first-pass episode
    solved, at `retry_temperature` and with new seeds. Exploration goes where the model has found nothing yet
    instead of re-sampling what it already solves."""
    retry_temperature: float = 0.7
    """Sampling temperature of the retry pass (the first pass uses the rollout's)."""
    max_sources_per_task: int = 2
    """Successes of one task kept as sources (the first found)."""
    planner: str = "both"
    """'model' (the actor writes runbooks), 'extractive' (derived from the trajectory) or 'both'."""
    runbooks_per_success: int = 4
    """K: model-planner samples per source (the extractive planner writes one)."""
    planner_transcript_chars: int = 1200
    """How much of a source episode the model planner reads (`runbook.transcript`): the first N characters of its
    commands and the starts of their outputs. A 6-turn mini task fits in 1,200; the paper's 64-turn episodes need
    more (the `gpu` profile's)."""
    planner_tokens: int = 160
    """The model planner's reply, in tokens: a runbook of a few short milestones, checks and pitfalls."""
    model_reviewer: bool = False
    """Also ask the actor to approve each runbook the deterministic gates passed."""
    resolves_per_runbook: int = 4
    """M: guided re-solves per approved runbook."""
    resolve_with_examples: bool = True
    """Show the harness's fixed worked examples during a re-solve too, as private context stripped like the
    runbook (the prompt and action format stay the plain harness's). The 135M model cannot hold the action
    format from the plain prompt alone: with the runbook only, far fewer re-solves pass (docs/experiments.md, "Figures behind the code's choices").
    Set False for a model that can."""
    keep_passing_prefix: bool = True
    """Also keep a failed re-solve cut after its first action that leaves a passing workspace: its commands are
    replayed in a fresh sandbox of the task, action by action, and the protected verifier judges each state.
    The 135M model often solves a task in its first action and then overwrites the result in the next
    (`head -n 2 a > b`, then `cat a > b`); the cut keeps what it did right, all of it its own tokens. How
    many re-solves it keeps: docs/experiments.md, "Figures behind the code's choices"."""
    trim_after_pass: bool = True
    """Cut a successful re-solve after its first action that leaves a passing workspace when a later action
    changed the workspace again (replayed and fingerprinted as for `keep_passing_prefix`). Such a re-solve
    passes by luck: `grep -c ' ERROR ' a > n.txt`, then `cat n.txt > a` rewrites a file no check reads, and
    trained on whole it teaches the overwrite that fails other tasks."""
    shadow_gate: bool = True
    """Keep no re-solve that may be pretending to succeed (`verify.shadow.success_flags`): one whose commands,
    replayed in a fresh sandbox of its task's shadow twin (same instruction, other hidden data), fail there
    (`input_specific`: e.g. `echo 7 > count.txt`), or that touches the tests or the verifier's output, or writes
    outside the workspace. The flags are counted in the funnel (`flagged`) and written to flags.json."""
    max_examples_per_task: int = 8
    """Distinct clean re-solves of one task kept for training (easy tasks would otherwise dominate)."""
    rollout: RolloutConfig = field(default_factory=lambda: RolloutConfig(max_turns=3, max_new_tokens=64))
    """Episode limits for discovery and re-solves (the harness field is set per step)."""
    sft: SFTConfig = field(default_factory=SFTConfig)
    """The fine-tuning step."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RSRConfig":
        d = dict(d)
        d["rollout"] = RolloutConfig(**d.get("rollout", {}))
        d["sft"] = SFTConfig(**d.get("sft", {}))
        return cls(**d)
