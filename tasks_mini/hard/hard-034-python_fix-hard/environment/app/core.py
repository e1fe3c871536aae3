"""Helpers for the stats job."""


def helper_value(text):
    # '1h30m' -> 5400, '45s' -> 45, '2m5s' -> 125
    units = {'h': 60, 'm': 60, 's': 1}
    total, num = 0, ''
    for ch in text:
        if ch.isdigit():
            num = ch
        else:
            total += int(num) * units[ch]
            num = ''
    return total
