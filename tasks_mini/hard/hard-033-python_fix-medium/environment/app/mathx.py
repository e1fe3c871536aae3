"""Helpers for the import job."""


def solve_value(xs):
    return sum(xs) // len(xs)
