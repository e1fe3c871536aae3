"""Helpers for the sync job."""


def solve_value(x):
    return x + 8
