"""File operations: create, copy, rename and organise files."""

from __future__ import annotations

import random
import shlex

from ..spec import Check, TaskSpec
from ._common import Paths, app, fname, hidden, phrase, words

FAMILY = "file_ops"


def _keep(p: Paths, rng: random.Random) -> tuple[str, str, Check]:
    """A file the task must leave alone: partial credit for not breaking things."""
    keep = p(fname(rng, ".md"))
    content = hidden(rng, lambda r: f"# {phrase(r, 2)}\nkeep this file as it is\n")
    return keep, content, Check("other_file_untouched", f"assert read({keep!r}) == {content!r}")


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    keep, keep_text, keep_check = _keep(p, rng)
    files = {keep: keep_text}
    if difficulty == "easy":
        kind = rng.choice(["create", "mkdir", "copy", "rename"])
        if kind == "create":
            name, text = p(fname(rng, ".txt")), phrase(rng, 3)
            instr = rng.choice([
                f"Create a file named {app(name)} that contains the single line: {text}",
                f"Write the text '{text}' into a new file {app(name)}.",
            ])
            checks = [
                Check("file_exists", f"assert (APP / {name!r}).is_file()"),
                Check("content_matches", f"assert read({name!r}).strip() == {text!r}"),
            ]
            sol = f"echo {shlex.quote(text)} > {name}"
        elif kind == "mkdir":
            d, f = p(words(rng, 1)[0] + "_dir"), fname(rng, ".log")
            instr = f"Create the directory {app(d)} and inside it an empty file named {f}."
            checks = [
                Check("dir_exists", f"assert (APP / {d!r}).is_dir()"),
                Check("file_exists", f"assert (APP / {d!r} / {f!r}).is_file()"),
                Check("file_is_empty", f"assert (APP / {d!r} / {f!r}).stat().st_size == 0"),
            ]
            sol = f"mkdir -p {d} && touch {d}/{f}"
        else:
            src, dst = p(fname(rng, ".txt")), p(fname(rng, ".txt"))
            text = hidden(rng, lambda r: phrase(r, 4) + "\n")  # the file's content: not in the instruction
            files[src] = text
            verb = "Copy" if kind == "copy" else "Rename"
            instr = f"{verb} the file {app(src)} to {app(dst)}."
            checks = [
                Check("target_exists", f"assert (APP / {dst!r}).is_file()"),
                Check("target_content", f"assert read({dst!r}) == {text!r}"),
            ]
            if kind == "copy":
                checks.append(Check("source_kept", f"assert read({src!r}) == {text!r}"))
                sol = f"cp {src} {dst}"
            else:
                checks.append(Check("source_gone", f"assert not (APP / {src!r}).exists()"))
                sol = f"mv {src} {dst}"
    elif difficulty == "medium":
        d = p(words(rng, 1)[0])
        names = [fname(rng, ".txt", 1) for _ in range(2)]
        texts = [phrase(rng, 3) for _ in names]
        listing = "; ".join(f"{n} containing '{t}'" for n, t in zip(names, texts))
        instr = f"Create the directory {app(d)} with two files in it: {listing}."
        checks = [Check("dir_exists", f"assert (APP / {d!r}).is_dir()")]
        sol_lines = [f"mkdir -p {d}"]
        for i, (n, t) in enumerate(zip(names, texts), 1):
            checks.append(Check(f"file{i}_content", f"assert read({d + '/' + n!r}).strip() == {t!r}"))
            sol_lines.append(f"echo {shlex.quote(t)} > {d}/{n}")
        checks.append(Check("only_two_files", f"assert sorted(x.name for x in (APP / {d!r}).iterdir()) == {sorted(names)!r}"))
        sol = "\n".join(sol_lines)
    else:  # hard: sort a messy folder by extension
        inbox = p("inbox")
        exts = rng.sample([".txt", ".csv", ".md", ".json", ".log"], 3)
        def draw_layout(r):  # the files and their contents: not stated in the instruction
            layout = {}
            for ext in exts:
                for _ in range(r.randint(2, 3)):
                    layout[fname(r, ext)] = phrase(r, 3) + "\n"
            return layout

        layout = hidden(rng, draw_layout)
        for n, t in layout.items():
            files[f"{inbox}/{n}"] = t
        instr = (
            f"The folder {app(inbox)} holds files of several types. Move every file into a "
            f"sub-folder of {app(inbox)} named after its extension without the dot "
            f"(for example notes.md goes to {app(inbox)}/md/notes.md). Leave no file directly in {app(inbox)}."
        )
        checks = []
        for ext in exts:
            want = sorted(n for n in layout if n.endswith(ext))
            e = ext[1:]
            checks.append(Check(f"{e}_folder", f"assert sorted(x.name for x in (APP / {inbox!r} / {e!r}).iterdir()) == {want!r}"))
        checks.append(Check("no_loose_files", f"assert not [x for x in (APP / {inbox!r}).iterdir() if x.is_file()]"))
        checks.append(Check("contents_intact", "\n".join(
            f"assert read({inbox + '/' + n.rsplit('.', 1)[1] + '/' + n!r}) == {t!r}" for n, t in layout.items())))
        sol = f"cd {inbox}\nfor f in *.*; do e=\"${{f##*.}}\"; mkdir -p \"$e\"; mv \"$f\" \"$e/\"; done"
    checks.append(keep_check)
    return TaskSpec(FAMILY, difficulty, instr, files, checks, sol)
