"""Files of records: atomic writes, and JSONL reads whose errors name the file and the line.

Every file the kit writes goes through a temp file that is renamed into place, so a
reader (or a resumed run) never sees half a file, and a crash mid-write leaves the
previous version intact. One module, below every stage, so that the trajectory files,
the stages' JSON and JSONL, evaluation results and reports all share one implementation.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through `path.tmp` and a rename (parent directories created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@contextmanager
def atomic_dir(dest: Path) -> Iterator[Path]:
    """A temp directory beside `dest` to fill; when the block ends without an error it replaces `dest` (an old
    one is renamed aside first and removed after), and on an error it is removed, `dest` left as it was."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        yield tmp
        if dest.exists():
            old = dest.with_name(f".{dest.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(dest, old)
            os.replace(tmp, dest)
            shutil.rmtree(old)
        else:
            os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json_atomic(path: Path, obj) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2) + "\n")


def write_jsonl_atomic(path: Path, rows: list) -> None:
    """One JSON document per line; `rows` are dicts, or objects with a `to_json()`."""
    write_text_atomic(path, "".join((r.to_json() if hasattr(r, "to_json") else json.dumps(r)) + "\n" for r in rows))


def read_json(path: Path):
    """The JSON document in `path`; one that does not parse raises ValueError('PATH: not JSON (reason)')."""
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from e


def read_jsonl(path: Path, parse: Callable[[str], T] = json.loads, what: str = "JSON") -> list[T]:
    """The non-blank lines of `path`, each through `parse`; a line that does not parse raises
    ValueError('PATH:LINE: not WHAT (reason)')."""
    out = []
    for no, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(parse(line))
            except (json.JSONDecodeError, TypeError, KeyError) as e:
                raise ValueError(f"{path}:{no}: not {what} ({e})") from e
    return out
