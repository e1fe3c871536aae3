"""Helpers for the billing job."""


def work_value(words):
    # counts words case-insensitively, returns a dict
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 1) + 1
    return counts
