"""The README keeps its cap (150 lines, DESIGN.md) and every relative link in it, in the docs pages and in the
notebooks' markdown points at a file that exists. Run: pytest tests/teach/test_readme.py
"""

import json
import re

import pytest

from ..conftest import REPO

LINK = re.compile(r"\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    return [t.split("#")[0] for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def test_the_readme_keeps_its_cap():
    n = len((REPO / "README.md").read_text().splitlines())
    assert n <= 150, f"README.md has {n} lines (cap 150: move reference parts to docs/)"


@pytest.mark.parametrize("page", ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))])
def test_relative_links_resolve(page):
    path = REPO / page
    missing = [t for t in links(path.read_text()) if t and not (path.parent / t).exists()]
    assert not missing, f"{page}: {missing}"


@pytest.mark.parametrize("nb", sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb")))
def test_notebook_links_resolve_and_every_cell_has_an_id_and_no_output(nb):
    path = REPO / "notebooks" / nb
    cells = json.loads(path.read_text())["cells"]
    assert all(c.get("id") for c in cells), f"{nb}: a cell without an id"
    assert not any(c.get("outputs") for c in cells), f"{nb}: outputs are committed (strip them)"
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    missing = [t for t in links(text) if t and not (path.parent / t).exists()]
    assert not missing, f"{nb}: {missing}"
