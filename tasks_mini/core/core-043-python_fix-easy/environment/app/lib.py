"""Helpers for the report job."""


def solve_data(a, b):
    return a + b
