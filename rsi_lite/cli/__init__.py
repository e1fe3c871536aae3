"""The command line: `rsi-lite run | rsr | rpr | eval | report | tasks ...`."""

from .main import main

__all__ = ["main"]
