"""Python fixes: repair a buggy function so that hidden unit checks pass."""

from __future__ import annotations

import random

from ..spec import Check, TaskSpec
from ._common import Paths, app, hidden, shadowed

FAMILY = "python_fix"

# (function source with bug, fixed source, hidden cases as (args, expected))
EASY = [
    ("def {f}(a, b):\n    return a - b\n", "def {f}(a, b):\n    return a + b\n",
     "adds two numbers", [((2, 3), 5), ((-4, 9), 5), ((0, 0), 0)]),
    ("def {f}(a, b):\n    return a + b\n", "def {f}(a, b):\n    return a * b\n",
     "multiplies two numbers", [((2, 3), 6), ((-4, 5), -20), ((7, 0), 0)]),
    ("def {f}(n):\n    return n % 2 == 1\n", "def {f}(n):\n    return n % 2 == 0\n",
     "tells whether n is even", [((4,), True), ((7,), False), ((0,), True)]),
    ("def {f}(xs):\n    return max(xs)\n", "def {f}(xs):\n    return min(xs)\n",
     "returns the smallest element of a list", [(([3, 1, 2],), 1), (([5],), 5), (([-1, -9, 4],), -9)]),
]
MEDIUM = [
    ("def {f}(xs):\n    return sum(xs) // len(xs)\n", "def {f}(xs):\n    return sum(xs) / len(xs)\n",
     "returns the arithmetic mean of a non-empty list of numbers", [(([1, 2],), 1.5), (([4, 4, 4],), 4.0), (([1, 2, 3, 5],), 2.75)]),
    ("def {f}(s):\n    return s[::-1] == s[1:]\n", "def {f}(s):\n    return s == s[::-1]\n",
     "tells whether the string s is a palindrome", [(("level",), True), (("abc",), False), (("",), True), (("ab",), False)]),
    ("def {f}(n):\n    total = 0\n    for i in range(1, n):\n        total += i\n    return total\n",
     "def {f}(n):\n    total = 0\n    for i in range(1, n + 1):\n        total += i\n    return total\n",
     "returns 1 + 2 + ... + n", [((1,), 1), ((4,), 10), ((10,), 55), ((0,), 0)]),
]
HARD = [
    ("def {f}(text):\n    # '1h30m' -> 5400, '45s' -> 45, '2m5s' -> 125\n    units = {{'h': 60, 'm': 60, 's': 1}}\n    total, num = 0, ''\n"
     "    for ch in text:\n        if ch.isdigit():\n            num = ch\n        else:\n            total += int(num) * units[ch]\n            num = ''\n    return total\n",
     "def {f}(text):\n    # '1h30m' -> 5400, '45s' -> 45, '2m5s' -> 125\n    units = {{'h': 3600, 'm': 60, 's': 1}}\n    total, num = 0, ''\n"
     "    for ch in text:\n        if ch.isdigit():\n            num += ch\n        else:\n            total += int(num) * units[ch]\n            num = ''\n    return total\n",
     "converts a duration like '1h30m' or '2m5s' to seconds",
     [(("45s",), 45), (("1h30m",), 5400), (("2m5s",), 125), (("10h",), 36000), (("1h1m1s",), 3661)]),
    ("def {f}(words):\n    # counts words case-insensitively, returns a dict\n    counts = {{}}\n    for w in words:\n        counts[w] = counts.get(w, 1) + 1\n    return counts\n",
     "def {f}(words):\n    # counts words case-insensitively, returns a dict\n    counts = {{}}\n    for w in words:\n        w = w.lower()\n        counts[w] = counts.get(w, 0) + 1\n    return counts\n",
     "counts the words of a list case-insensitively (keys in lower case)",
     [((["a", "b", "a"],), {"a": 2, "b": 1}), ((["X", "x"],), {"x": 2}), (([],), {}), ((["Hi"],), {"hi": 1})]),
]


def _parametric(rng: random.Random, difficulty: str):
    """Bugs with drawn constants, so two instances differ in more than names."""
    if difficulty == "easy":
        k = rng.randint(3, 12)
        return ("def {f}(x):\n    return x + %d\n" % k, "def {f}(x):\n    return x * %d\n" % k,
                f"multiplies x by {k}", [((x,), x * k) for x in hidden(rng, lambda r: r.sample(range(-20, 40), 3))])
    if difficulty == "medium":
        lo, hi = sorted(rng.sample(range(-50, 100), 2))
        return ("def {f}(x):\n    return max(%d, min(%d, x))\n" % (hi, lo), "def {f}(x):\n    return max(%d, min(%d, x))\n" % (lo, hi),
                f"clamps x into the range [{lo}, {hi}]",
                [((x,), max(lo, min(hi, x))) for x in shadowed(rng, (lo - 7, hi + 3, (lo + hi) // 2, lo, hi), lambda r: (
                    lo - r.randint(1, 20), hi + r.randint(1, 20), r.randint(lo, hi), lo, hi))])  # checked inputs
    rate = rng.choice([5, 7, 8, 10, 12, 15, 19, 20, 21, 25])
    return ("def {f}(prices):\n    # total with %d%% tax, rounded to cents\n    total = 0\n    for p in prices:\n        total = p * (1 + %d / 100)\n    return round(total)\n" % (rate, rate),
            "def {f}(prices):\n    # total with %d%% tax, rounded to cents\n    total = 0\n    for p in prices:\n        total += p * (1 + %d / 100)\n    return round(total, 2)\n" % (rate, rate),
            f"returns the total of a list of prices with {rate}% tax added, rounded to cents",
            [((ps,), round(sum(p * (1 + rate / 100) for p in ps), 2))
             for ps in hidden(rng, lambda r: ([r.randint(100, 999) / 100 for _ in range(r.randint(2, 4))], [],
                                              [r.randint(1, 99)]))])  # the checked price lists: not stated


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    table = {"easy": EASY, "medium": MEDIUM, "hard": HARD}[difficulty]
    if rng.random() < 0.5:
        buggy, fixed, what, cases = _parametric(rng, difficulty)
    else:
        buggy, fixed, what, cases = rng.choice(table)
    f = rng.choice(["compute", "solve", "helper", "calc", "work", "process"]) + "_" + rng.choice(["value", "result", "item", "data"])
    mod = rng.choice(["utils", "mathx", "tools", "lib", "core"])
    path = p(f"{mod}.py")
    header = f'"""Helpers for the {rng.choice(["billing", "report", "import", "stats", "sync"])} job."""\n\n\n'
    src = header + buggy.format(f=f)
    instr = f"The function {f} in {app(path)} should be a function that {what}, but it has a bug. Fix it."
    load = (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('m', APP / {path!r})\n"
        "m = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\n"
    )
    checks = [Check("module_imports", load + f"assert callable(m.{f})")]
    for i, (args, want) in enumerate(cases, 1):
        checks.append(Check(f"case_{i}", load + f"assert m.{f}(*{args!r}) == {want!r}"))
    sol = f"cat > {path} <<'EOF'\n{header}{fixed.format(f=f)}EOF"
    return TaskSpec(FAMILY, difficulty, instr, {path: src}, checks, sol)
