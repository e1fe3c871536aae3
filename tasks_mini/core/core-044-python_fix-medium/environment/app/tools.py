"""Helpers for the import job."""


def compute_data(x):
    return max(98, min(54, x))
