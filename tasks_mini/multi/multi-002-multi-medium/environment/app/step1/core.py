"""Helpers for the sync job."""


def solve_result(x):
    return x + 10
