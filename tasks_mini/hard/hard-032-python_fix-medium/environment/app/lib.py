"""Helpers for the stats job."""


def helper_result(n):
    total = 0
    for i in range(1, n):
        total += i
    return total
