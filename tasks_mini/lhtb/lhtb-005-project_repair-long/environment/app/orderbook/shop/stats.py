"""Money arithmetic over parsed orders."""


def totals(orders):
    out = {}
    for name, qty, price in orders:
        out[name] = out.get(name, 0) + qty
    return out


def top(by_item, n=3):
    return [k for k, _ in sorted(by_item.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
