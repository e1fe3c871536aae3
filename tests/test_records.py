"""Atomic writes and JSONL reads (rsi_lite.records)."""

import json
import os

import pytest

from rsi_lite.records import atomic_dir, read_jsonl, write_json_atomic, write_jsonl_atomic, write_text_atomic


def test_jsonl_round_trip_and_objects_with_to_json(tmp_path):
    class Row:
        def __init__(self, n):
            self.n = n

        def to_json(self):
            return json.dumps({"n": self.n})

    p = tmp_path / "deep" / "rows.jsonl"
    write_jsonl_atomic(p, [{"a": 1}, Row(2)])
    assert read_jsonl(p) == [{"a": 1}, {"n": 2}]
    assert sorted(os.listdir(p.parent)) == ["rows.jsonl"]  # no temp file left behind


def test_a_bad_line_is_named_by_file_and_line_number(tmp_path):
    p = tmp_path / "rows.jsonl"
    p.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(ValueError, match=r"rows\.jsonl:3: not JSON"):
        read_jsonl(p)
    with pytest.raises(ValueError, match=r"rows\.jsonl:1: not a row"):
        read_jsonl(p, lambda line: json.loads(line)["missing"], "a row")


def test_a_failed_write_keeps_the_previous_file(tmp_path):
    p = tmp_path / "doc.json"
    write_json_atomic(p, {"v": 1})
    with pytest.raises(TypeError):
        write_json_atomic(p, {"v": object()})  # fails while serialising, before anything is written
    assert json.loads(p.read_text()) == {"v": 1}
    write_text_atomic(p, "{}\n")
    assert p.read_text() == "{}\n"


def test_a_directory_is_filled_beside_its_place_and_replaces_the_old_one_whole(tmp_path):
    dest = tmp_path / "out" / "model"
    with atomic_dir(dest) as tmp:
        (tmp / "a.txt").write_text("one")
        assert not dest.exists()
    assert (dest / "a.txt").read_text() == "one"
    with atomic_dir(dest) as tmp:
        (tmp / "b.txt").write_text("two")
    assert sorted(p.name for p in dest.iterdir()) == ["b.txt"]
    with pytest.raises(RuntimeError):
        with atomic_dir(dest) as tmp:
            (tmp / "c.txt").write_text("half")
            raise RuntimeError("killed")
    assert sorted(p.name for p in dest.iterdir()) == ["b.txt"]
    assert sorted(os.listdir(dest.parent)) == ["model"]  # no temp or old directory left behind
