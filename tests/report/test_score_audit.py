"""The integrality audit reproduces the statements of docs/paper.md.  Run: pytest tests/report/test_score_audit.py"""

from rsi_lite.report.score_audit import explain, fits


def test_51_70_fits_no_count_over_89_178_267():
    assert fits(51.70, [89], [1, 2, 3]) == []
    assert "fits no whole count" in explain(51.70, [89], [1, 2, 3])
    assert [str(f).split()[0] for f in fits(51.69, [89], [1])] == ["46/89"]


def test_86_52_is_77_of_89():
    assert any(f.count == 77 and f.denominator == 89 for f in fits(86.52, [89], [1, 2, 3]))


def test_19_84_fits_only_25_of_126():
    found = fits(19.84, [63, 66], [1, 2, 3])
    assert [(f.count, f.tasks, f.runs) for f in found] == [(25, 63, 2)]
    assert explain(19.84, [63, 66], [1, 2, 3]).startswith("19.84 fits only 25/126")


def test_16_95_fits_no_count_over_70_or_74():
    assert fits(16.95, [70, 74], [1, 2, 3]) == []
