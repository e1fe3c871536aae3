"""Import a Terminal-Bench 1 task (`task.yaml` layout) into the Harbor layout.

Mapping (as Harbor's own mapper does, see harbor-and-terminus.md):

    task.yaml instruction          -> instruction.md
    max_agent_timeout_sec (360)    -> [agent].timeout_sec
    max_test_timeout_sec (60)      -> [verifier].timeout_sec
    every other task.yaml field    -> [metadata] (category also becomes the family)
    Dockerfile + build files       -> environment/
    tests/                         -> tests/
    run-tests.sh                   -> tests/run-tests.orig.sh (kept for reference)
    solution.sh | solution.yaml    -> solution/solve.sh

The new tests/test.sh runs pytest with the CTRF plugin offline and writes reward.txt.
Terminal-Bench's run-tests.sh usually installs pytest over the network first; our sandbox
has no network and provides pytest, so those lines are dropped. Any other line of the
original script is reported, because the import may then need a hand check.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import yaml

from ..records import atomic_dir
from .spec import TEST_SH, _toml_value
from .task import TaskError

KNOWN = {"task.yaml", "solution.sh", "solution.yaml", "run-tests.sh", "tests", "docker-compose.yaml", "docker-compose.yml"}
INSTALL_LINE = re.compile(
    r"^\s*(#.*|set -\w+.*|apt(-get)?\s.*|pip3?\s+install.*|python3? -m pip install.*|uv\s.*|uvx?\s.*|"
    r"curl\s.*(install|uv).*|source\s+\$HOME/.local/bin/env.*|\.\s+\$HOME/.local/bin/env.*|export PATH=.*|"
    r"cd\s+.*|if \[.*|fi|else|then|.*pytest.*|)\s*$")


def _solution_script(src: Path) -> str:
    sh = src / "solution.sh"
    if sh.is_file():
        return sh.read_text()
    yml = src / "solution.yaml"
    if yml.is_file():
        steps = yaml.safe_load(yml.read_text()) or []
        if not isinstance(steps, list):
            raise TaskError(f"{yml}: expected a list of steps")
        cmds = []
        for i, step in enumerate(steps):
            cmd = step.get("command") if isinstance(step, dict) else step
            if not isinstance(cmd, str):
                raise TaskError(f"{yml}: step {i} has no 'command'")
            cmds.append(cmd)
        return "#!/usr/bin/env bash\n" + "\n".join(cmds) + "\n"
    raise TaskError(f"{src}: no solution.sh or solution.yaml")


def import_tb1(src: str | Path, dest: str | Path) -> tuple[Path, list[str]]:
    """Convert the Terminal-Bench 1 task at `src` into a Harbor task at `dest`; returns (dest, warnings)."""
    src, dest = Path(src), Path(dest)
    ty = src / "task.yaml"
    if not ty.is_file():
        raise TaskError(f"{ty}: missing (not a Terminal-Bench 1 task)")
    try:
        meta = yaml.safe_load(ty.read_text())
    except yaml.YAMLError as e:
        raise TaskError(f"{ty}: invalid YAML: {e}") from e
    if not isinstance(meta, dict):
        raise TaskError(f"{ty}: expected a mapping")
    instruction = meta.pop("instruction", None)
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskError(f"{ty}: field 'instruction' is missing or empty")
    if not (src / "Dockerfile").is_file():
        raise TaskError(f"{src / 'Dockerfile'}: missing")
    if not (src / "tests").is_dir():
        raise TaskError(f"{src / 'tests'}: missing")
    agent_t = meta.pop("max_agent_timeout_sec", 360)
    test_t = meta.pop("max_test_timeout_sec", 60)
    warnings = []
    run_tests = src / "run-tests.sh"
    if run_tests.is_file():
        odd = [ln for ln in run_tests.read_text().splitlines()[1:] if not INSTALL_LINE.match(ln)]
        if odd:
            warnings.append(f"{run_tests}: lines beyond installing and running pytest were not carried over: {odd[:5]}")
    with atomic_dir(dest) as tmp:
        (tmp / "instruction.md").write_text(instruction.rstrip() + "\n")
        metadata = {"family": meta.get("category", "imported"), "suite": "imported", "imported_from": "terminal-bench-1"}
        metadata.update({k: v for k, v in meta.items() if isinstance(v, (str, int, float, bool, list))})
        lines = ['schema_version = "1.4"', "", "[metadata]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in metadata.items()]
        lines += ["", "[verifier]", f"timeout_sec = {float(test_t)}", "", "[agent]", f"timeout_sec = {float(agent_t)}", ""]
        (tmp / "task.toml").write_text("\n".join(lines))
        env = tmp / "environment"
        env.mkdir()
        for p in src.iterdir():
            if p.name not in KNOWN:
                (shutil.copytree if p.is_dir() else shutil.copy2)(p, env / p.name)
        shutil.copytree(src / "tests", tmp / "tests")
        test_sh = TEST_SH.replace('TESTS="${TESTS_DIR:-/tests}"', 'TESTS="${TESTS_DIR:-/tests}"\nexport TEST_DIR="$TESTS"  # Terminal-Bench 1 tests read $TEST_DIR')
        (tmp / "tests" / "test.sh").write_text(test_sh)
        (tmp / "tests" / "test.sh").chmod(0o755)
        if run_tests.is_file():
            shutil.copy2(run_tests, tmp / "tests" / "run-tests.orig.sh")
        (tmp / "solution").mkdir()
        (tmp / "solution" / "solve.sh").write_text(_solution_script(src))
        (tmp / "solution" / "solve.sh").chmod(0o755)
        (tmp / "import.json").write_text(json.dumps({"source": str(src), "warnings": warnings}, indent=2) + "\n")
        if dest.exists():
            raise TaskError(f"{dest}: already exists; remove it first")
    return dest, warnings
