"""rsi-lite: Terminal-RSI (recursive self-rewrite + policy refinement for terminal agents) at small scale."""

__version__ = "0.1.0"
