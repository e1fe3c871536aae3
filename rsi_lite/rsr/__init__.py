"""Recursive Self-Rewrite: discovery, runbooks, review, guided re-solve, clean, masked SFT.

`run_rsr(run_dir, cycle, RSRConfig(...))` runs the stage over files in `run_dir/rsr-N/`;
`rsi-lite rsr --run DIR --cycle N` is the same from the shell.
"""

from .config import RSRConfig
from .stage import run_discovery_ablation, run_rsr

__all__ = ["RSRConfig", "run_discovery_ablation", "run_rsr"]
