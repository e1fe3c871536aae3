"""Helpers for the billing job."""


def solve_data(s):
    return s[::-1] == s[1:]
