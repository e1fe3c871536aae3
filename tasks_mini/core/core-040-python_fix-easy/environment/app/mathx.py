"""Helpers for the sync job."""


def solve_item(n):
    return n % 2 == 1
