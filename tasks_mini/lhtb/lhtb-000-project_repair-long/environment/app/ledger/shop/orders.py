"""Reading the orders file."""


def parse_line(line):
    name, qty, price = line.split(',')
    return name.strip(), int(qty), float(price)


def read_orders(path):
    with open(path, encoding='utf-8') as f:
        rows = [l.strip() for l in f]
    return [parse_line(l) for l in rows[1:]]
