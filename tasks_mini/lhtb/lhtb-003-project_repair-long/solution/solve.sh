#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > ledger/shop/orders.py <<'EOF'
"""Reading the orders file."""


def parse_line(line):
    name, qty, price = line.split(',')
    return name.strip(), int(qty), float(price)


def read_orders(path):
    with open(path, encoding='utf-8') as f:
        rows = [l.strip() for l in f]
    return [parse_line(l) for l in rows[1:] if l and not l.startswith('#')]
EOF
cat > ledger/shop/report.py <<'EOF'
"""Turning orders into the JSON report."""

from .stats import top, totals


def build(orders):
    by_item = {k: round(v, 2) for k, v in totals(orders).items()}
    return {'orders': len(orders), 'total': round(sum(by_item.values()), 2), 'by_item': by_item, 'top': top(by_item)}
EOF
cat > ledger/run.py <<'EOF'
import json
import os
import sys

from shop.orders import read_orders
from shop.report import build


def main(src='data/orders.csv', out='out/report.json'):
    report = build(read_orders(src))
    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
    with open(out, 'w') as f:
        json.dump(report, f, indent=2)


if __name__ == '__main__':
    main(*sys.argv[1:3])
EOF
