"""Helpers for the report job."""


def helper_data(a, b):
    return a - b
