"""Debugging a broken shell script: find the bug, fix it, and make the script produce its output again."""

from __future__ import annotations

import random

from ..spec import Check, TaskSpec
from ._common import Paths, app, fname, hidden, nl, phrase, text_block

FAMILY = "debug_script"


def _checks(script: str, out: str, want: str, extra: list[Check]) -> list[Check]:
    fresh = f"(APP / {out!r}).unlink(missing_ok=True)\nr = run(['bash', {script!r}])\n"
    return [
        Check("script_runs_cleanly", fresh + "assert r.returncode == 0, r.stderr"),
        Check("output_written", fresh + f"assert (APP / {out!r}).is_file()"),
        Check("output_correct", fresh + f"assert read({out!r}) == {want!r}"),
        *extra,
    ]


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    script, out = p(fname(rng, ".sh", 1)), p(fname(rng, ".txt", 1))
    # paths inside the script are relative to the script's folder, so it runs from anywhere
    o = out.rsplit("/", 1)[-1]
    head = '#!/bin/bash\ncd "$(dirname "$0")"\n'
    if difficulty == "easy":
        msg = phrase(rng, 3)
        typo, good = rng.choice([("ech", "echo"), ("eho", "echo"), ("pritnf", "printf")])
        line = f"{typo} '{msg}\\n' > {o}" if good == "printf" else f"{typo} '{msg}' > {o}"
        body = head + f"# writes the greeting file\n{line}\n"
        fixed = body.replace(typo + " ", good + " ", 1)
        instr = f"The script {app(script)} should write '{msg}' to {app(out)}, but it fails. Fix the script and run it."
        checks = _checks(script, out, msg + "\n", [])
        sol = f"cat > {script} <<'EOF'\n{fixed}EOF\nbash {script}"
        return TaskSpec(FAMILY, difficulty, instr, {script: body}, checks, sol, executable={script})
    src = p(fname(rng, ".txt"))
    o_src = src.rsplit("/", 1)[-1]
    lines = hidden(rng, lambda r: text_block(r, r.randint(4, 8)))  # the input's lines: not stated
    if difficulty == "medium":
        # a misspelt variable: the loop reads nothing, the output stays empty
        var = rng.choice(["line", "row", "entry"])
        body = head + f"# numbers each line of {o_src}\nn=0\nwhile read -r {var}; do\n  n=$((n + 1))\n  echo \"$n: ${var}s\"\ndone < {o_src} > {o}\n"
        fixed = body.replace(f"${var}s", f"${var}")
        want = nl([f"{i}: {x}" for i, x in enumerate(lines, 1)])
        instr = (
            f"{app(script)} should write every line of {app(src)} to {app(out)} prefixed with its line number and "
            f"': ' (like '1: first line'), but its output is wrong. Fix the bug in the script and run it."
        )
    else:
        # two bugs: an off-by-one range and an overwriting redirect
        n = rng.randint(4, 7)
        word = rng.choice(["item", "step", "row", "part"])
        body = head + f"# writes '{word} I: <line I of {o_src}>' for I = 1..{n}\nrm -f {o}\nfor i in $(seq 1 {n - 1}); do\n  echo \"{word} $i: $(sed -n \"${{i}}p\" {o_src})\" > {o}\ndone\n"
        fixed = body.replace(f"seq 1 {n - 1}", f"seq 1 {n}").replace(f'p\" {o_src})\" > {o}', f'p\" {o_src})\" >> {o}')
        lines = hidden(rng, lambda r: text_block(r, n + 2))
        want = nl([f"{word} {i}: {lines[i - 1]}" for i in range(1, n + 1)])
        instr = (
            f"{app(script)} should write {n} lines '{word} I: <line I of {o_src}>' for I = 1 to {n} into "
            f"{app(out)}, but the output is wrong. Fix the script (there may be more than one bug) and run it."
        )
    extra = [Check("reads_input_file", f"assert {o_src!r} in read({script!r})")]
    checks = _checks(script, out, want, extra)
    checks.insert(3, Check("line_count", f"(APP / {out!r}).unlink(missing_ok=True)\nrun(['bash', {script!r}])\nassert len(lines({out!r})) == {len(want.splitlines())}"))
    sol = f"cat > {script} <<'EOF'\n{fixed}EOF\nbash {script}"
    return TaskSpec(FAMILY, difficulty, instr, {script: body, src: nl(lines)}, checks, sol, executable={script})
