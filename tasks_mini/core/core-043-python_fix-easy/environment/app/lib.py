"""Helpers for the report job."""


def work_data(a, b):
    return a + b
