"""Helpers for the import job."""


def helper_result(x):
    return x + 8
