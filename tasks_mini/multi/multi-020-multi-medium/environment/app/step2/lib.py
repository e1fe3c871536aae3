"""Helpers for the import job."""


def helper_result(a, b):
    return a - b
