"""Contamination audit: does any evaluation task leak into the training pool?

Each task is reduced to the set of word 5-grams ("shingles") of its instruction, its
workspace files (archives are opened) and its protected tests. Two instances of the same
family share template text, so their Jaccard similarity is well above zero; a leak is a
pair that shares (nearly) everything, parameters included. The audit reports, for every
eval task, its nearest pool task and their similarity, and flags pairs at or above the
threshold. It also reports the same-family baseline (the typical similarity of two
*different* instances), so the threshold can be read against it.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from .spec import TEST_PREAMBLE, TEST_SH
from .task import Task

TOKEN = re.compile(r"[A-Za-z0-9_.\-/]+")
DEFAULT_N = 5
DEFAULT_THRESHOLD = 0.8


def _file_texts(path: Path):
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
                for m in tar.getmembers():
                    if m.isfile():
                        yield m.name + "\n" + tar.extractfile(m).read().decode("utf-8", "replace")
            return
        except (OSError, tarfile.TarError, EOFError):
            pass
    yield data.decode("utf-8", "replace")


def task_text(task: Task) -> str:
    parts = [task.instruction]
    app = task.environment_dir / "app"
    roots = [app] if app.is_dir() else [task.environment_dir]
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and p.name != "Dockerfile":
                parts.append(str(p.relative_to(root)))
                parts.extend(_file_texts(p))
    for p in sorted(task.tests_dir.glob("test_*.py")):
        parts.append(p.read_text())
    return "\n".join(parts)


def shingles(text: str, n: int = DEFAULT_N) -> frozenset[str]:
    toks = TOKEN.findall(text.lower())
    if len(toks) < n:
        return frozenset([" ".join(toks)])
    return frozenset(" ".join(toks[i:i + n]) for i in range(len(toks) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass
class Nearest:
    eval_task: str
    family: str
    pool_task: str
    similarity: float


@dataclass
class OverlapReport:
    n: int
    threshold: float
    eval_tasks: int
    pool_tasks: int
    nearest: list[Nearest] = field(default_factory=list)
    same_family_baseline: float = 0.0
    """Median similarity of an eval task to its nearest pool task of the same family."""

    @property
    def leaks(self) -> list[Nearest]:
        return [x for x in self.nearest if x.similarity >= self.threshold]

    @property
    def max_similarity(self) -> float:
        return max((x.similarity for x in self.nearest), default=0.0)

    def summary(self) -> str:
        worst = max(self.nearest, key=lambda x: x.similarity, default=None)
        lines = [
            f"overlap audit: {self.eval_tasks} eval tasks vs {self.pool_tasks} pool tasks, word {self.n}-gram Jaccard",
            f"median nearest-neighbour similarity (same family): {self.same_family_baseline:.3f}",
            f"max similarity: {self.max_similarity:.3f}" + (f" ({worst.eval_task} ~ {worst.pool_task})" if worst else ""),
            f"pairs at or above {self.threshold}: {len(self.leaks)}",
        ]
        lines += [f"  LEAK {x.eval_task} ~ {x.pool_task}: {x.similarity:.3f}" for x in self.leaks]
        return "\n".join(lines)


def task_shingles(task: Task, n: int = DEFAULT_N) -> frozenset[str]:
    """The task's shingles minus the boilerplate every generated task shares (test preamble, test.sh)."""
    boiler = shingles(TEST_PREAMBLE + "\n" + TEST_SH, n)
    return shingles(task_text(task), n) - boiler


def overlap_audit(eval_tasks: list[Task], pool_tasks: list[Task], *, n: int = DEFAULT_N,
                  threshold: float = DEFAULT_THRESHOLD) -> OverlapReport:
    pool = [(t, task_shingles(t, n)) for t in pool_tasks]
    report = OverlapReport(n, threshold, len(eval_tasks), len(pool_tasks))
    same = []
    for t in eval_tasks:
        s = task_shingles(t, n)
        best = (None, 0.0)
        best_same = 0.0
        for p, ps in pool:
            sim = jaccard(s, ps)
            if sim > best[1]:
                best = (p, sim)
            if p.family == t.family:
                best_same = max(best_same, sim)
        report.nearest.append(Nearest(t.name, t.family, best[0].name if best[0] else "", best[1]))
        if any(p.family == t.family for p, _ in pool):
            same.append(best_same)
    same.sort()
    report.same_family_baseline = same[len(same) // 2] if same else 0.0
    return report
