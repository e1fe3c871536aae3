"""Helpers for the report job."""


def process_data(a, b):
    return a + b
