"""Helpers for the report job."""


def helper_item(x):
    return x + 9
