"""Multi-step tasks: several family tasks chained in one workspace (the `multi` and `extreme` suites).

Each step lives in its own folder (`step1/`, `step2/`, ...). When `packed`, the inputs of
every step arrive inside one archive that must be unpacked first, so the steps depend on
an earlier action rather than sitting side by side.
"""

from __future__ import annotations

import random

from .families import FAMILIES, Paths
from .families._common import targz
from .spec import Check, TaskSpec


def compose(rng: random.Random, parts: list[tuple[str, str]], *, packed: bool, family: str, difficulty: str) -> TaskSpec:
    """Chain `parts` (family, difficulty) into one task."""
    steps = [FAMILIES[fam].generate(rng, diff, Paths(f"step{i}/")) for i, (fam, diff) in enumerate(parts, 1)]
    files: dict[str, str | bytes] = {}
    executable: set[str] = set()
    for s in steps:
        files.update(s.files)
        executable |= s.executable
    input_dirs = sorted({path.split("/")[0] for path in files})
    intro = [f"This task has {len(steps)} steps; do all of them. Every path below is inside /app."]
    sol = []
    if packed and files:
        archive = "inputs.tar.gz"
        modes = {k: (0o755 if k in executable else 0o644) for k in files}
        files, executable = {archive: targz(files, modes)}, set()
        intro.append(f"First unpack /app/{archive} inside /app: it holds the input files of the steps.")
        sol.append(f"tar -xzf {archive}")
    body = [f"Step {i}: {s.instruction}" for i, s in enumerate(steps, 1)]
    checks = [Check(f"step{i}_{c.name}", c.body) for i, s in enumerate(steps, 1) for c in s.checks]
    if packed and input_dirs:
        checks.append(Check("inputs_unpacked", f"assert all((APP / d).is_dir() for d in {input_dirs!r})"))
    sol += [f"mkdir -p step{i}\n( {s.solution.strip()}\n)" for i, s in enumerate(steps, 1)]
    return TaskSpec(
        family=family, difficulty=difficulty, instruction="\n\n".join(["\n".join(intro), *body]),
        files=files, checks=checks, solution="\n".join(sol), executable=executable,
        agent_timeout_sec=sum(s.agent_timeout_sec for s in steps),
        verifier_timeout_sec=max(60, sum(s.verifier_timeout_sec for s in steps) // 2),
        params={"steps": [list(p) for p in parts], "packed": packed},
    )
