#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > tally/shop/orders.py <<'EOF'
"""Reading the orders file."""


def parse_line(line):
    name, qty, price = line.split(',')
    return name.strip(), int(qty), float(price)


def read_orders(path):
    with open(path, encoding='utf-8') as f:
        rows = [l.strip() for l in f]
    return [parse_line(l) for l in rows[1:] if l and not l.startswith('#')]
EOF
cat > tally/shop/stats.py <<'EOF'
"""Money arithmetic over parsed orders."""


def totals(orders):
    out = {}
    for name, qty, price in orders:
        out[name] = out.get(name, 0) + qty * price
    return out


def top(by_item, n=3):
    return [k for k, _ in sorted(by_item.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
EOF
cat > tally/shop/report.py <<'EOF'
"""Turning orders into the JSON report."""

from .stats import top, totals


def build(orders):
    by_item = {k: round(v, 2) for k, v in totals(orders).items()}
    return {'orders': len(orders), 'total': round(sum(by_item.values()), 2), 'by_item': by_item, 'top': top(by_item)}
EOF
