"""Permissions and links (the out-of-distribution `swr` family: it never appears in the training pool)."""

from __future__ import annotations

import random

from ..spec import Check, TaskSpec
from ._common import Paths, app, fname, hidden, phrase, words

FAMILY = "fs_meta"

MODE = "import stat\ndef mode(rel):\n    return stat.S_IMODE((APP / rel).lstat().st_mode)\n"


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    if difficulty == "easy":
        if rng.random() < 0.5:
            script = p(fname(rng, ".sh", 1))
            msg = hidden(rng, lambda r: phrase(r, 2))  # what the script prints: not stated
            files = {script: f"#!/bin/sh\necho '{msg}'\n"}
            instr = f"Make the script {app(script)} executable (keep its content)."
            checks = [
                Check("is_executable", MODE + f"assert mode({script!r}) & 0o100"),
                Check("content_kept", f"assert read({script!r}) == {files[script]!r}"),
                Check("runs_directly", f"assert run([str(APP / {script!r})]).stdout.strip() == {msg!r}"),
            ]
            return TaskSpec(FAMILY, difficulty, instr, files, checks, f"chmod +x {script}")
        target = p(fname(rng, ".txt"))
        link = p(rng.choice(["latest", "current", "active", "main"]) + ".txt")
        text = hidden(rng, lambda r: phrase(r, 4) + "\n")
        instr = f"Create a symbolic link {app(link)} that points to {target.rsplit('/', 1)[-1]} (a relative link, in the same folder)."
        checks = [
            Check("link_exists", f"assert (APP / {link!r}).is_symlink()"),
            Check("link_target", f"import os\nassert os.readlink(APP / {link!r}) == {target.rsplit('/', 1)[-1]!r}"),
            Check("link_resolves", f"assert read({link!r}) == {text!r}"),
        ]
        d = f"cd {target.rsplit('/', 1)[0]} && " if "/" in target else ""
        return TaskSpec(FAMILY, difficulty, instr, {target: text}, checks, f"{d}ln -s {target.rsplit('/', 1)[-1]} {link.rsplit('/', 1)[-1]}")
    if difficulty == "medium":
        secret = p(fname(rng, ".key", 1))
        pub = p(fname(rng, ".pub", 1))
        files = hidden(rng, lambda r: {secret: phrase(r, 5) + "\n", pub: phrase(r, 5) + "\n"})
        instr = (
            f"Lock down the keys: {app(secret)} must be readable and writable by its owner only (mode 600), and "
            f"{app(pub)} readable by everyone but writable only by its owner (mode 644)."
        )
        checks = [
            Check("secret_mode", MODE + f"assert mode({secret!r}) == 0o600"),
            Check("public_mode", MODE + f"assert mode({pub!r}) == 0o644"),
            Check("contents_kept", f"assert read({secret!r}) == {files[secret]!r} and read({pub!r}) == {files[pub]!r}"),
        ]
        return TaskSpec(FAMILY, difficulty, instr, files, checks, f"chmod 600 {secret}\nchmod 644 {pub}")
    # hard: a release layout with versioned folders, a moving link and a read-only archive
    app_name = hidden(rng, lambda r: words(r, 1)[0])  # the files' name and content: not stated
    versions = sorted(rng.sample(range(1, 9), 3))
    files = {p(f"releases/v{v}/{app_name}.txt"): f"{app_name} version {v}\n" for v in versions}
    newest = versions[-1]
    instr = (
        f"{app(p('releases'))} has the folders " + ", ".join(f"v{v}" for v in versions) + ". "
        f"Create the symbolic link {app(p('current'))} pointing to releases/v{newest} (relative), make every file "
        f"in the older release folders read-only for everyone (mode 444), and leave v{newest} writable by its owner."
    )
    checks = [
        Check("current_is_link", f"assert (APP / {p('current')!r}).is_symlink()"),
        Check("current_target", f"import os\nassert os.readlink(APP / {p('current')!r}).rstrip('/') == 'releases/v{newest}'"),
        Check("current_resolves", f"assert read({p('current') + '/' + app_name + '.txt'!r}) == {files[p(f'releases/v{newest}/{app_name}.txt')]!r}"),
        Check("old_releases_read_only", MODE + "\n".join(f"assert mode({p(f'releases/v{v}/{app_name}.txt')!r}) == 0o444" for v in versions[:-1])),
        Check("newest_writable", MODE + f"assert mode({p(f'releases/v{newest}/{app_name}.txt')!r}) & 0o200"),
    ]
    sol = f"ln -s releases/v{newest} {p('current')}\n" + "\n".join(
        f"chmod 444 {p(f'releases/v{v}')}/*" for v in versions[:-1])
    return TaskSpec(FAMILY, difficulty, instr, files, checks, sol)
