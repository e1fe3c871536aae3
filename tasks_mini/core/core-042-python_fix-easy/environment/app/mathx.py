"""Helpers for the billing job."""


def work_value(n):
    return n % 2 == 1
