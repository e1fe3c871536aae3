"""Scripting: write small executable shell scripts, checked by running them on hidden inputs."""

from __future__ import annotations

import random

from ..spec import Check, TaskSpec
from ._common import NAMES, Paths, app, fname, hidden, phrase, text_block

FAMILY = "scripting"


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    script = p(fname(rng, ".sh", 1))
    exists = [
        Check("script_exists", f"assert (APP / {script!r}).is_file()"),
        Check("script_executable", f"import os\nassert os.access(APP / {script!r}, os.X_OK)"),
    ]
    if difficulty == "easy":
        msg = phrase(rng, 3)
        instr = f"Create an executable shell script {app(script)} that prints exactly: {msg}"
        checks = exists + [
            Check("prints_message", f"r = run(['bash', {script!r}])\nassert r.stdout.strip() == {msg!r}"),
            Check("exits_zero", f"assert run(['bash', {script!r}]).returncode == 0"),
        ]
        sol = f"printf '#!/bin/bash\\necho \"{msg}\"\\n' > {script}\nchmod +x {script}"
        return TaskSpec(FAMILY, difficulty, instr, {}, checks, sol)
    if difficulty == "medium":
        greet = rng.choice(["Hello", "Welcome", "Hi", "Greetings"])
        instr = (
            f"Create an executable shell script {app(script)} that takes one argument NAME and prints "
            f"'{greet}, NAME!' (for example: {script.rsplit('/', 1)[-1]} {rng.choice(NAMES)})."
        )
        a, b = hidden(rng, lambda r: r.sample(NAMES, 2))  # the names the checks try: not stated
        checks = exists + [
            Check("greets_first_name", f"assert run(['bash', {script!r}, {a!r}]).stdout.strip() == {f'{greet}, {a}!'!r}"),
            Check("greets_other_name", f"assert run(['bash', {script!r}, {b!r}]).stdout.strip() == {f'{greet}, {b}!'!r}"),
        ]
        sol = f"cat > {script} <<'EOF'\n#!/bin/bash\necho \"{greet}, $1!\"\nEOF\nchmod +x {script}"
        return TaskSpec(FAMILY, difficulty, instr, {}, checks, sol)
    # hard: a script over a file argument, checked on hidden files it has never seen
    kind = rng.choice(["count", "longest"])
    if kind == "count":
        what = "the number of non-empty lines in the file given as its first argument"
        impl = "grep -c . \"$1\""
        expect = lambda ls: str(sum(1 for x in ls if x.strip()))  # noqa: E731
    else:
        what = "the longest line of the file given as its first argument (the first one if several tie)"
        impl = "awk 'length > max {max = length; line = $0} END {print line}' \"$1\""
        expect = lambda ls: max(ls, key=len)  # noqa: E731
    instr = f"Create an executable shell script {app(script)} that prints {what}."
    checks = list(exists)
    for i in range(3):
        ls = hidden(rng, lambda r: text_block(r, r.randint(3, 9)))  # a hidden input
        if i == 2:
            ls = ls[:2] + ["", ""] + ls[2:]  # blank lines are a classic trap
        body = "\n".join(ls) + "\n"
        checks.append(Check(
            f"hidden_input_{i + 1}",
            f"import tempfile\nwith tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:\n"
            f"    f.write({body!r})\nassert run(['bash', {script!r}, f.name]).stdout.strip() == {expect(ls)!r}",
        ))
    sol = f"cat > {script} <<'EOF'\n#!/bin/bash\n{impl}\nEOF\nchmod +x {script}"
    return TaskSpec(FAMILY, difficulty, instr, {}, checks, sol)
