"""Helpers for the import job."""


def work_result(words):
    # counts words case-insensitively, returns a dict
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 1) + 1
    return counts
