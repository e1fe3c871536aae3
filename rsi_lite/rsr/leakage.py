"""What of a task is protected, and whether a text gives it away.

A task's public part is its instruction and the files of its workspace. Protected are:
the test files (the verifier's code), the values that appear only in the tests (an
expected count, a hidden input), and the reference solution. A runbook, and later a
re-solve's actions, must not carry any of it:

    test_text      a run of `n` words (default 6) that occurs in a test file and in the text,
                   but not in the public part
    test_value     a literal of the tests (a string of 3+ characters, or a number of 2+
                   digits) that occurs nowhere in the public part but does in the text
    solution_line  a command line of solution/solve.sh (8+ characters) found in the text
    script         a fenced code block or a shebang: a runbook says what to do, not the code

All checks are plain string work on files; nothing here runs a model or a sandbox.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

WORD = re.compile(r"[A-Za-z0-9_./-]+")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = [w.lower() for w in WORD.findall(text)]
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class Protected:
    """The protected material of one task and its public text."""

    public: str
    test_grams: frozenset = field(repr=False)
    values: tuple[str, ...] = ()
    solution_lines: tuple[str, ...] = ()
    n: int = 6


def _public_text(task) -> str:
    parts = [task.instruction]
    env = Path(task.path) / "environment"
    for f in sorted(env.rglob("*")) if env.is_dir() else []:
        if f.is_file() and f.name != "Dockerfile" and f.stat().st_size < 200_000:
            parts.append(f.read_text(errors="replace"))
    return "\n".join(parts)


def _literals(source: str) -> set[str]:
    """Literals of a Python test file that could be expected values: strings of 3+ characters, strings that are
    a number (an expected count such as '6'), and numbers of 2+ digits."""
    out: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, str) and (len(v.strip()) >= 3 or NUMBER.fullmatch(v.strip())):
                out.add(v.strip())
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and len(str(abs(v)).replace(".", "")) >= 2:
                out.add(str(v))
    return out


@lru_cache(maxsize=512)
def _protected_at(path: str, n: int) -> Protected:
    from ..tasks.task import load_task

    task = load_task(Path(path))
    public = _public_text(task)
    tests_dir = Path(path) / "tests"
    test_text, literals = "", set()
    for f in sorted(tests_dir.glob("*")) if tests_dir.is_dir() else []:
        if f.is_file():
            src = f.read_text(errors="replace")
            test_text += src + "\n"
            if f.suffix == ".py":
                literals |= _literals(src)
    from ..tasks.spec import TEST_PREAMBLE

    grams = ngrams(test_text, n) - ngrams(public, n) - ngrams(TEST_PREAMBLE, n)
    literals -= _literals(TEST_PREAMBLE)  # the shared helpers' literals ('cwd', 'APP_DIR') protect nothing
    public_numbers = set(NUMBER.findall(public))
    values = tuple(sorted(v for v in literals if "\n" not in v and (
        v not in public_numbers if NUMBER.fullmatch(v) else v not in public)))
    sol = Path(path) / "solution" / "solve.sh"
    lines = []
    if sol.is_file():
        for line in sol.read_text(errors="replace").splitlines():
            line = line.strip()
            if len(line) >= 8 and not line.startswith(("#", "set -", "cd ")) and line not in public:
                lines.append(line)
    return Protected(public, frozenset(grams), values, tuple(lines), n)


def protected(task, n: int = 6) -> Protected:
    return _protected_at(str(Path(task.path).resolve()), n)


def find_leaks(text: str, task, *, n: int = 6, allow_scripts: bool = False) -> list[str]:
    """Every way `text` gives away protected material of `task` (empty: clean)."""
    p = protected(task, n)
    leaks = []
    shared = ngrams(text, n) & p.test_grams
    if shared:
        leaks.append(f"test_text: {' '.join(sorted(shared)[0])!r}")
    for v in p.values:
        hit = bool(NUMBER.fullmatch(v)) and v in NUMBER.findall(text) or not NUMBER.fullmatch(v) and v in text
        if hit:
            leaks.append(f"test_value: {v!r}")
    for line in p.solution_lines:
        if line in text:
            leaks.append(f"solution_line: {line!r}")
    if not allow_scripts and ("```" in text or re.search(r"^#!", text, re.M)):
        leaks.append("script: a code block or a shebang")
    return leaks
