"""A generated task in memory (`TaskSpec`) and its writer to the Harbor layout.

Family generators build `TaskSpec`s; `write_task` turns one into a directory that any
Harbor-compatible runner (and our sandboxes) can execute:

    instruction.md  task.toml  environment/Dockerfile  environment/app/...
    tests/test.sh  tests/test_outputs.py  solution/solve.sh

Every check becomes one pytest test, so the CTRF report counts partial progress.
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from ..records import atomic_dir

BASE_IMAGE = "rsi-lite/base:bookworm"

TEST_PREAMBLE = '''\
"""Protected checks for task {name} ({family}, {difficulty}): one test per semantic check.

The agent never sees this file: it is copied to /tests only after the agent phase.
"""
import json
import os
import pathlib
import subprocess

APP = pathlib.Path(os.environ.get("APP_DIR", "/app"))


def read(rel):
    return (APP / rel).read_text()


def lines(rel):
    return (APP / rel).read_text().splitlines()


def run(args, **kw):
    kw.setdefault("timeout", 20)
    kw.setdefault("cwd", APP)
    return subprocess.run(args, capture_output=True, text=True, **kw)
'''

TEST_SH = """\
#!/usr/bin/env bash
# Verifier entry point (Harbor contract). pytest writes the CTRF report; reward.txt is 1
# only when every check passed. The paths default to Harbor's and can be moved (local backend).
export PYTHONDONTWRITEBYTECODE=1
LOGS="${VERIFIER_LOGS_DIR:-/logs/verifier}"
TESTS="${TESTS_DIR:-/tests}"
mkdir -p "$LOGS"
cd "${APP_DIR:-/app}" || exit 1
# Only the CTRF plugin is loaded (autoloading every installed plugin costs seconds), and
# --rootdir/--confcutdir keep a conftest.py or pytest.ini planted in /app out of the run.
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 pytest -p ctrf.main --ctrf "$LOGS/ctrf.json" \\
    --rootdir="$TESTS" --confcutdir="$TESTS" -p no:cacheprovider -rA "$TESTS"/test_*.py
if [ $? -eq 0 ]; then echo 1 > "$LOGS/reward.txt"; else echo 0 > "$LOGS/reward.txt"; fi
"""


@dataclass
class Check:
    """One semantic check: becomes `def test_<name>():` with `body` as its code."""

    name: str
    body: str


@dataclass
class TaskSpec:
    """A task as a family generator produces it, before it is written to disk."""

    family: str
    difficulty: str
    instruction: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    """Paths relative to /app -> content; written to environment/app/ and copied in by the Dockerfile."""
    checks: list[Check] = field(default_factory=list)
    solution: str = ""
    """Bash body of solution/solve.sh; it runs in /app."""
    executable: set[str] = field(default_factory=set)
    """Which of `files` get mode 0755."""
    agent_timeout_sec: int = 180
    verifier_timeout_sec: int = 60
    params: dict = field(default_factory=dict)

    def test_source(self, name: str) -> str:
        seen: set[str] = set()
        parts = [TEST_PREAMBLE.format(name=name, family=self.family, difficulty=self.difficulty)]
        for check in self.checks:
            if check.name in seen:
                raise ValueError(f"task {name}: duplicate check name {check.name!r}")
            seen.add(check.name)
            body = textwrap.indent(textwrap.dedent(check.body).strip(), "    ")
            parts.append(f"\n\ndef test_{check.name}():\n{body}\n")
        return "".join(parts)

    def fingerprint(self) -> str:
        """Hash of everything that makes this instance what it is (used to keep suites and pool disjoint)."""
        h = hashlib.sha256(self.instruction.encode())
        for path in sorted(self.files):
            content = self.files[path]
            h.update(path.encode())
            h.update(content if isinstance(content, bytes) else content.encode())
        return h.hexdigest()[:16]


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def task_toml(spec: TaskSpec, *, suite: str, seed: str) -> str:
    meta = {
        "family": spec.family,
        "difficulty": spec.difficulty,
        "suite": suite,
        "seed": seed,
        "checks": len(spec.checks),
        "generator": f"rsi_lite.tasks.families.{spec.family}",
    }
    lines = ['schema_version = "1.4"', "", "[metadata]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in meta.items()]
    lines += ["", "[verifier]", f"timeout_sec = {spec.verifier_timeout_sec}"]
    lines += ["", "[agent]", f"timeout_sec = {spec.agent_timeout_sec}"]
    lines += ["", "[environment]", "allow_internet = false", ""]
    return "\n".join(lines)


def dockerfile(spec: TaskSpec) -> str:
    lines = [f"FROM {BASE_IMAGE}", "WORKDIR /app"]
    if spec.files:
        lines.append("COPY app/ /app/")
    return "\n".join(lines) + "\n"


def write_task(spec: TaskSpec, dest: Path, *, suite: str, seed: str) -> Path:
    """Write `spec` as a Harbor task directory at `dest` (atomically: temp dir, then rename)."""
    dest = Path(dest)
    with atomic_dir(dest) as tmp:
        (tmp / "instruction.md").write_text(spec.instruction.rstrip() + "\n")
        (tmp / "task.toml").write_text(task_toml(spec, suite=suite, seed=seed))
        env = tmp / "environment"
        env.mkdir()
        (env / "Dockerfile").write_text(dockerfile(spec))
        for rel, content in sorted(spec.files.items()):
            path = env / "app" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
            path.chmod(0o755 if rel in spec.executable else 0o644)
        tests = tmp / "tests"
        tests.mkdir()
        (tests / "test.sh").write_text(TEST_SH)
        (tests / "test.sh").chmod(0o755)
        (tests / "test_outputs.py").write_text(spec.test_source(dest.name))
        sol = tmp / "solution"
        sol.mkdir()
        body = textwrap.dedent(spec.solution).strip()
        (sol / "solve.sh").write_text(
            '#!/usr/bin/env bash\n# Reference solution (given to the oracle only).\nset -euo pipefail\n'
            f'cd "${{APP_DIR:-/app}}"\n{body}\n'
        )
        (sol / "solve.sh").chmod(0o755)
        for d in [tmp, *[p for p in tmp.rglob("*") if p.is_dir()]]:
            d.chmod(0o755)
    return dest


KIND_WORDS = 5
"""Words of the masked instruction that name a task's kind."""


def task_kind(family: str, difficulty: str, instruction: str) -> str:
    """The kind of a task: what stays when an instance's names are masked.

    >>> task_kind("file_ops", "easy", "Write the text 'a b' into a new file /app/x.txt.")
    'file_ops/easy: Write the text X into'
    """
    masked = re.sub(r"\S*/\S+|'[^']*'|\"[^\"]*\"|\d+", "X", instruction)
    return f"{family}/{difficulty}: " + " ".join(masked.split()[:KIND_WORDS])
