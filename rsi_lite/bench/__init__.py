"""Benchmarks run by hand (`python -m rsi_lite.bench.rollout`, `.update`, `.sandbox`, `.verdicts`): each prints figures; none is a test."""
