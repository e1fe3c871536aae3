"""Long-horizon project repair (the `lhtb` suite): a small Python project with several dependent bugs.

The bugs are layered: the script crashes before it can be wrong, and it is wrong on the
given data before it is wrong on the hidden stress inputs (blank lines, comments, many
rows, unicode), so every fixed layer shows up as more passed checks.
"""

from __future__ import annotations

import json
import random

from ..spec import Check, TaskSpec
from ._common import WORDS, Paths, app, hidden, nl

FAMILY = "project_repair"

PARSE = {
    "good": "def parse_line(line):\n    name, qty, price = line.split(',')\n    return name.strip(), int(qty), float(price)\n",
    "delimiter": "def parse_line(line):\n    name, qty, price = line.split(';')\n    return name.strip(), int(qty), float(price)\n",
    "qty_text": "def parse_line(line):\n    name, qty, price = line.split(',')\n    return name.strip(), qty.strip(), float(price)\n",
}
READ = {
    "good": "def read_orders(path):\n    with open(path, encoding='utf-8') as f:\n        rows = [l.strip() for l in f]\n    return [parse_line(l) for l in rows[1:] if l and not l.startswith('#')]\n",
    "no_skip": "def read_orders(path):\n    with open(path, encoding='utf-8') as f:\n        rows = [l.strip() for l in f]\n    return [parse_line(l) for l in rows[1:]]\n",
}
TOTAL = {
    "good": "def totals(orders):\n    out = {}\n    for name, qty, price in orders:\n        out[name] = out.get(name, 0) + qty * price\n    return out\n",
    "qty_only": "def totals(orders):\n    out = {}\n    for name, qty, price in orders:\n        out[name] = out.get(name, 0) + qty\n    return out\n",
}
TOP = {
    "good": "def top(by_item, n=3):\n    return [k for k, _ in sorted(by_item.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]\n",
    "ascending": "def top(by_item, n=3):\n    return [k for k, _ in sorted(by_item.items(), key=lambda kv: (kv[1], kv[0]))[:n]]\n",
}
ROUND = {"good": "2", "whole": "0"}
MKDIR = {"good": "    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)\n", "missing": ""}

README = """# {name}

`python3 run.py [INPUT] [OUTPUT]` reads an orders CSV (default `data/orders.csv`) and
writes a JSON report (default `out/report.json`, its folder created if missing).

Input: a header line `item,qty,price`, then one order per line. Blank lines and lines
starting with `#` are ignored. `qty` is a whole number, `price` a decimal.

Report: `{{"orders": <number of orders>, "total": <sum of qty*price>, "by_item": {{<item>:
<sum of qty*price for that item>}}, "top": [<the 3 items with the largest totals,
largest first, ties by name>]}}`. Every amount is rounded to 2 decimals.
"""


def _project(choice: dict[str, str]) -> dict[str, str]:
    return {
        "shop/__init__.py": "",
        "shop/orders.py": "\"\"\"Reading the orders file.\"\"\"\n\n\n" + PARSE[choice["parse"]] + "\n\n" + READ[choice["read"]],
        "shop/stats.py": "\"\"\"Money arithmetic over parsed orders.\"\"\"\n\n\n" + TOTAL[choice["total"]] + "\n\n" + TOP[choice["top"]],
        "shop/report.py": (
            "\"\"\"Turning orders into the JSON report.\"\"\"\n\nfrom .stats import top, totals\n\n\n"
            "def build(orders):\n    by_item = {k: round(v, %s) for k, v in totals(orders).items()}\n"
            "    return {'orders': len(orders), 'total': round(sum(by_item.values()), %s), 'by_item': by_item, 'top': top(by_item)}\n"
        ) % (ROUND[choice["round"]], ROUND[choice["round"]]),
        "run.py": (
            "import json\nimport os\nimport sys\n\nfrom shop.orders import read_orders\nfrom shop.report import build\n\n\n"
            "def main(src='data/orders.csv', out='out/report.json'):\n    report = build(read_orders(src))\n"
            + MKDIR[choice["mkdir"]]
            + "    with open(out, 'w') as f:\n        json.dump(report, f, indent=2)\n\n\n"
            "if __name__ == '__main__':\n    main(*sys.argv[1:3])\n"
        ),
    }


def _orders(rng: random.Random, n: int, items: list[str], junk: bool) -> tuple[str, list]:
    rows, orders = ["item,qty,price"], []
    for i in range(n):
        if junk and i % 7 == 3:
            rows.append(rng.choice(["", "# restock later", "   "]))
        name, qty, price = rng.choice(items), rng.randint(0, 9), rng.randint(50, 2000) / 100
        rows.append(f"{name},{qty},{price}")
        orders.append((name, qty, price))
    return nl(rows), orders


def _report(orders) -> dict:
    by_item: dict[str, float] = {}
    for name, qty, price in orders:
        by_item[name] = by_item.get(name, 0) + qty * price
    by_item = {k: round(v, 2) for k, v in by_item.items()}
    top = [k for k, _ in sorted(by_item.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
    return {"orders": len(orders), "total": round(sum(by_item.values()), 2), "by_item": by_item, "top": top}


def generate(rng: random.Random, difficulty: str = "long", p: Paths = Paths()) -> TaskSpec:
    proj = p(rng.choice(["shopkit", "orderbook", "tally", "ledger"]))
    bug_slots = {"parse": ["delimiter", "qty_text"], "read": ["no_skip"], "total": ["qty_only"],
                 "top": ["ascending"], "round": ["whole"], "mkdir": ["missing"]}
    broken = rng.sample(sorted(bug_slots), rng.randint(4, 5))
    choice = {slot: (rng.choice(bug_slots[slot]) if slot in broken else "good") for slot in bug_slots}
    items = rng.sample(WORDS, 6)
    # the orders: not stated (a shadow's project has other ones, and other hidden stress inputs)
    data, orders = hidden(rng, lambda r: _orders(r, r.randint(10, 16), items, junk=False))
    files = {f"{proj}/{k}": v for k, v in _project(choice).items()}
    files[f"{proj}/data/orders.csv"] = data
    files[f"{proj}/README.md"] = README.format(name=proj.rsplit("/", 1)[-1])
    instr = (
        f"The project in {app(proj)} should turn data/orders.csv into out/report.json when run as "
        f"`python3 run.py` from {app(proj)}, as its README.md describes. It is broken in several places. Repair it "
        f"so that it follows the README exactly; it will also be run on other, larger order files."
    )
    run_in = f"r = run(['python3', 'run.py'], cwd=APP / {proj!r})\n"
    report = f"json.loads(read({proj + '/out/report.json'!r}))"
    want = _report(orders)
    checks = [
        Check("runs_cleanly", run_in + "assert r.returncode == 0, r.stderr[-2000:]"),
        Check("report_written", run_in + f"assert (APP / {proj!r} / 'out' / 'report.json').is_file()"),
        Check("report_shape", run_in + f"assert set({report}) == {{'orders', 'total', 'by_item', 'top'}}"),
        Check("order_count", run_in + f"assert {report}['orders'] == {want['orders']}"),
        Check("item_totals", run_in + f"assert {report}['by_item'] == {want['by_item']!r}"),
        Check("grand_total", run_in + f"assert {report}['total'] == {want['total']!r}"),
        Check("top_items", run_in + f"assert {report}['top'] == {want['top']!r}"),
    ]
    # hidden stress inputs: never in the workspace, written by the check itself
    stress = [("blank_and_comment_lines", rng.randint(20, 30), True, items),
              ("many_rows", 2000, True, items),
              ("unicode_items", 40, True, ["café", "naïve", "jalapeño", "crème", "smörgås"])]
    for name, n, junk, its in stress:
        text, rows = hidden(rng, lambda r: _orders(r, n, its, junk))
        checks.append(Check(
            f"hidden_{name}",
            "import tempfile\nd = tempfile.mkdtemp()\n"
            f"open(d + '/in.csv', 'w', encoding='utf-8').write({text!r})\n"
            f"r = run(['python3', 'run.py', d + '/in.csv', d + '/sub/report.json'], cwd=APP / {proj!r})\n"
            f"assert r.returncode == 0, r.stderr[-2000:]\n"
            f"assert json.load(open(d + '/sub/report.json', encoding='utf-8')) == {json.loads(json.dumps(_report(rows)))!r}",
        ))
    checks.append(Check("data_unchanged", f"assert read({proj + '/data/orders.csv'!r}) == {data!r}"))
    good = _project({slot: "good" for slot in bug_slots})
    sol = "\n".join(f"cat > {proj}/{k} <<'EOF'\n{v}EOF" for k, v in good.items() if _project(choice)[k] != v)
    return TaskSpec(FAMILY, "long", instr, files, checks, sol, agent_timeout_sec=900, verifier_timeout_sec=120,
                    params={"bugs": sorted(broken)})
