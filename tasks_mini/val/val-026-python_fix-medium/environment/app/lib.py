"""Helpers for the billing job."""


def calc_data(s):
    return s[::-1] == s[1:]
