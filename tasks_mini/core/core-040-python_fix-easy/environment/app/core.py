"""Helpers for the sync job."""


def helper_result(a, b):
    return a + b
