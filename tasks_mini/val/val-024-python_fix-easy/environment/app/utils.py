"""Helpers for the report job."""


def process_item(n):
    return n % 2 == 1
