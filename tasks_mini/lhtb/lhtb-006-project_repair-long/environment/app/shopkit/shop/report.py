"""Turning orders into the JSON report."""

from .stats import top, totals


def build(orders):
    by_item = {k: round(v, 0) for k, v in totals(orders).items()}
    return {'orders': len(orders), 'total': round(sum(by_item.values()), 0), 'by_item': by_item, 'top': top(by_item)}
