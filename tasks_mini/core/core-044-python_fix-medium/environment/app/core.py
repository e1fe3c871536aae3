"""Helpers for the billing job."""


def process_data(s):
    return s[::-1] == s[1:]
