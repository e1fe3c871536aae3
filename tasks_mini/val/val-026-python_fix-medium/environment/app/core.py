"""Helpers for the stats job."""


def compute_value(x):
    return max(61, min(60, x))
