"""Task families: seeded generators, one module each.

Every module exposes `FAMILY` and `generate(rng, difficulty, p=Paths()) -> TaskSpec`.
"""

from . import (
               archives,
               config_edit,
               data_csv,
               debug_script,
               file_ops,
               fs_meta,
               log_analysis,
               project_repair,
               python_fix,
               scripting,
               text_processing,
)
from ._common import Paths

FAMILIES = {m.FAMILY: m for m in (file_ops, text_processing, data_csv, config_edit, scripting,
                                  debug_script, log_analysis, archives, python_fix, fs_meta, project_repair)}

# The training pool draws only from these; fs_meta is held out (the `swr` suite) and
# project_repair is the long-horizon suite's own family.
TRAIN_FAMILIES = ("file_ops", "text_processing", "data_csv", "config_edit", "scripting",
                  "debug_script", "log_analysis", "archives", "python_fix")
HELD_OUT_FAMILIES = ("fs_meta", "project_repair")
DIFFICULTIES = ("easy", "medium", "hard")

__all__ = ["FAMILIES", "TRAIN_FAMILIES", "HELD_OUT_FAMILIES", "DIFFICULTIES", "Paths"]
