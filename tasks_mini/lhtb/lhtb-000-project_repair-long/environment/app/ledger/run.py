import json
import os
import sys

from shop.orders import read_orders
from shop.report import build


def main(src='data/orders.csv', out='out/report.json'):
    report = build(read_orders(src))
    with open(out, 'w') as f:
        json.dump(report, f, indent=2)


if __name__ == '__main__':
    main(*sys.argv[1:3])
