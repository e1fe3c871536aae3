"""Training curves where users look for them: each step's scalar metrics to TensorBoard when asked.

metrics.jsonl is always written; `report_to="tensorboard"` (`--report-to tensorboard` on `rsi-lite rsr`,
`rpr` and `run`) also writes every numeric field of each row to `STAGE/tensorboard/`, so

    tensorboard --logdir runs/cpu

shows the SFT loss of every self-rewrite and the PPO curves of every refinement side by side (the tags are
the metrics' own names: `losses/sft`, `ratio/max`, `probe/pool_success`, ...).
"""

from __future__ import annotations

import math
from pathlib import Path

REPORT_TO = ("none", "tensorboard")


class Curves:
    """`add(row, step)` writes a metrics row's numbers; a no-op for `report_to="none"`."""

    def __init__(self, report_to: str, log_dir: Path | None):
        if report_to not in REPORT_TO:
            raise ValueError(f"report_to: {report_to!r} is not one of {', '.join(REPORT_TO)}")
        self.writer = None
        if report_to == "tensorboard" and log_dir is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as e:  # the package is what is missing, not the code
                raise RuntimeError("report_to='tensorboard' needs the tensorboard package: "
                                   "pip install -e '.[tensorboard]'") from e
            self.writer = SummaryWriter(log_dir=str(log_dir))

    def add(self, row: dict, step: int, prefix: str = "") -> None:
        if self.writer is None:
            return
        for key, value in row.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                self.writer.add_scalar(prefix + key, value, step)
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
