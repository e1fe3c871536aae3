"""Where the kit finds its own files."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TASKS_ROOT = REPO / "tasks_mini"
"""The checked-in suites (one folder per suite)."""
