"""The layout holds: the rooms of `docs/layout.md`, each with a line of purpose, a short top level, and tests that
mirror the rooms. (Who may import whom is import-linter's: `lint-imports`, run by `make test`.)
Run: pytest tests/test_layout.py"""

import ast

from .conftest import REPO

LIB = REPO / "rsi_lite"


def test_the_top_level_holds_at_most_a_dozen_modules():
    top = sorted(p.name for p in LIB.glob("*.py"))
    assert len(top) <= 12, top


def test_every_room_says_what_it_is_for():
    for init in sorted(LIB.rglob("__init__.py")):
        if "families" in init.parts:
            continue
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init}: no docstring saying what the room holds"


def test_the_tests_mirror_the_rooms():
    rooms = {p.name for p in LIB.iterdir() if (p / "__init__.py").is_file()}
    folders = {p.name for p in (REPO / "tests").iterdir() if (p / "__init__.py").is_file()} - {"scale_up"}
    assert folders <= rooms, folders - rooms
    for folder in folders:
        for test in (REPO / "tests" / folder).glob("test_*.py"):
            doc = ast.get_docstring(ast.parse(test.read_text())) or ""
            assert f"tests/{folder}/{test.name}" in doc, f"{test}: its docstring gives no run command with its path"
