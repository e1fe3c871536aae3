"""Notebook 03's reward audit: what share of all FDR and all SPR reward goes to failed episodes, three rows side
by side: the paper's audit, the kit's own PPO episodes, and the episodes the student's notebook audits.

    rows = [PAPER_AUDIT, KIT_AUDIT_RPR1, episodes_audit(trajs, "yours: ...")]
    print(audit_table(rows))

The kit's row and the student's are computed the same way as `rsi-lite report`'s (`report.write.failure_shares`):
from the reward each episode was paid (`Trajectory.rewards`, with the D_f of the tasks it was rolled out on).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ShareRow:
    """One row of the audit."""

    source: str
    """Whose episodes, and where the figures come from."""
    episodes: int | None
    """Episodes audited (None: not stated by the source)."""
    fdr_share: float
    """Failures' share of all FDR reward, in percent."""
    spr_share: float
    """Failures' share of all SPR reward, in percent."""
    fdr_at_least_one: int | None = None
    """Failures whose FDR reached 1.0 or more (paid at least what a success is); None: not recorded."""
    spr_at_least_one: int | None = None
    """The same under SPR; None: not recorded."""
    decimals: int = 2
    """Decimals the shares are printed with: as many as the source gives."""


PAPER_AUDIT = ShareRow("the paper: offline audit (docs/paper.md)", 4352, 50.09, 28.72, 158, 0)
"""The paper's offline audit of 4,352 trajectories (`docs/paper.md`, "Rewards"): failures took 50.09% of all FDR
reward and 158 of them scored >= 1.0; rescored with SPR, 28.72% and none."""

KIT_RUN_STAGE = "runs/cpu/rpr-1"
"""Where the kit's row was measured: RPR-1 of `rsi-lite run --profile cpu --out runs/cpu`, its PPO training
episodes (every `step-*/trajectories.jsonl`). The directory is not in the repository (`runs/` is git-ignored)."""

KIT_AUDIT_RPR1 = ShareRow("the kit: runs/cpu RPR-1 at e18a748, PPO episodes", 156, 22.6, 9.1, decimals=1)
"""Failures' share of the reward over RPR-1's 156 training episodes in the kit's `cpu` run (seed 0; the `cpu` profile
at e18a748, whose refinement was `configs/rpr-core-kinds-turn.json`), as
`rsi-lite report runs/cpu` computes it: `docs/experiments.md`, 2026-12-05, "The cpu profile's one command, timed end
to end on a clean clone (issue 25)". How many failures reached 1.0 is not in the log (None)."""


def stage_episodes(stage: Path) -> list:
    """The training episodes of an RPR stage directory (`DIR/rpr-N`): every step's `trajectories.jsonl`, oldest
    first, the warm-up's and calibration's included, as `rsi-lite report` reads them. [] when there are none."""
    from ..report.write import stage_trajectories

    stage = Path(stage)
    return stage_trajectories(stage) if stage.is_dir() else []


def episodes_audit(trajs: list, source: str) -> ShareRow:
    """The audit of `trajs` from the reward each was paid (`t.rewards["fdr"]`, `["spr"]`; a failure is an episode
    whose verdict is not a strict success). A reward that sums to 0 over the episodes gives a share of 0."""
    row = {}
    for kind in ("fdr", "spr"):
        paid = [(float(t.rewards.get(kind, 0.0)), bool(t.verifier.get("strict"))) for t in trajs]
        total = sum(r for r, _ in paid)
        failed = sum(r for r, ok in paid if not ok)
        row[f"{kind}_share"] = 100 * failed / total if total else 0.0
        row[f"{kind}_at_least_one"] = sum(1 for r, ok in paid if not ok and r >= 1.0)
    return ShareRow(source, len(trajs), **row)


def audit_table(rows: list[ShareRow]) -> str:
    """The rows as a fixed-width table; a figure the source does not give reads 'n/a'."""
    def num(v) -> str:
        return "n/a" if v is None else f"{v:,}"

    width = max(len(r.source) for r in rows)
    head = f"{'episodes of':{width}} {'episodes':>8} {'FDR share':>10} {'SPR share':>10} {'FDR >= 1.0':>11} {'SPR >= 1.0':>11}"
    lines = [head, "-" * len(head)]
    for r in rows:
        d = r.decimals
        lines.append(f"{r.source:{width}} {num(r.episodes):>8} {r.fdr_share:9.{d}f}% {r.spr_share:9.{d}f}% "
                     f"{num(r.fdr_at_least_one):>11} {num(r.spr_at_least_one):>11}")
    lines.append("share: failures' share of all reward paid; >= 1.0: failures paid at least a success's reward "
                 "(n/a: not in the source)")
    return "\n".join(lines)
