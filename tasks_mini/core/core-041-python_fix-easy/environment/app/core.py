"""Helpers for the billing job."""


def process_result(xs):
    return max(xs)
