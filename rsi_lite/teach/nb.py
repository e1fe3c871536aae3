"""What the notebooks' first cells need, so that teaching cells stay a few lines.

    from rsi_lite.teach.nb import BUDGET, ROOT, SMALL

`SMALL` is true under `RSI_LITE_BUDGET=small` (CI runs every notebook so, with the smallest settings);
`ROOT` is the repository, wherever the notebook was opened from (JupyterLab's root, a copy elsewhere).
"""

import os

from ..paths import REPO as ROOT

BUDGET = os.environ.get("RSI_LITE_BUDGET", "full")
SMALL = BUDGET == "small"

__all__ = ["BUDGET", "ROOT", "SMALL"]
