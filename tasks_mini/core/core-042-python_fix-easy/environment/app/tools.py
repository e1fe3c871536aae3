"""Helpers for the stats job."""


def solve_value(a, b):
    return a - b
