"""Text processing: transform a text file with the classic line tools (tr, sed, sort, grep)."""

from __future__ import annotations

import random
from collections import Counter

from ..spec import Check, TaskSpec
from ._common import WORDS, Paths, app, fname, hidden, nl, shadowed, text_block

FAMILY = "text_processing"


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    src = p(fname(rng, ".txt"))
    out = p(fname(rng, ".txt"))
    if difficulty == "easy":
        kind = rng.choice(["upper", "replace", "head"])
        lines = hidden(rng, lambda r: text_block(r, r.randint(3, 6)))  # the file's lines: not stated
        if kind == "replace":
            a, b = rng.sample([w for w in WORDS if len(w) > 3], 2)

            def place(r, ls):  # where the word occurs: hidden (nothing stated is drawn after this)
                ls = list(ls)
                ls[r.randrange(len(ls))] += f" {a}"
                ls[r.randrange(len(ls))] = f"{a} " + ls[0]
                return ls

            lines = hidden(rng, lambda r: place(r, lines))
            text = nl(lines)
            want = nl([" ".join(b if w == a else w for w in line.split()) for line in lines])
            instr = f"In the file {app(src)}, replace every occurrence of the word '{a}' with '{b}'. Edit the file in place."
            checks = [
                Check("old_word_gone", f"assert {a!r} not in read({src!r}).split()"),
                Check("new_word_count", f"assert read({src!r}).split().count({b!r}) == {want.split().count(b)}"),
                Check("rest_unchanged", f"assert read({src!r}) == {want!r}"),
            ]
            return TaskSpec(FAMILY, difficulty, instr, {src: text}, checks, f"sed -i 's/\\b{a}\\b/{b}/g' {src}")
        text = nl(lines)
        if kind == "upper":
            want = text.upper()
            instr = f"Write the contents of {app(src)} converted to upper case into a new file {app(out)}."
            sol = f"tr 'a-z' 'A-Z' < {src} > {out}"
        else:
            n = rng.randint(2, 3)
            want = nl(lines[:n])
            instr = f"Save the first {n} lines of {app(src)} into {app(out)}."
            sol = f"head -n {n} {src} > {out}"
        checks = [
            Check("output_exists", f"assert (APP / {out!r}).is_file()"),
            Check("line_count", f"assert len(lines({out!r})) == {len(want.splitlines())}"),
            Check("content_exact", f"assert read({out!r}) == {want!r}"),
            Check("input_unchanged", f"assert read({src!r}) == {text!r}"),
        ]
        return TaskSpec(FAMILY, difficulty, instr, {src: text}, checks, sol)
    if difficulty == "medium":
        kind = rng.choice(["sort_unique", "grep", "reverse"])
        lines = hidden(rng, lambda r: [r.choice(WORDS[:40]) for _ in range(r.randint(8, 14))])
        if kind == "sort_unique":
            want = nl(sorted(set(lines)))
            instr = f"Write the lines of {app(src)} sorted alphabetically, with duplicate lines removed, to {app(out)}."
            sol = f"sort -u {src} > {out}"
        elif kind == "grep":
            lines = text_block(rng, rng.randint(8, 12))
            key = rng.choice(" ".join(lines).split())  # stated; the twin's lines hold it in two of their lines

            def twin_lines(r, n=len(lines)):
                ls = text_block(r, n)
                for i in r.sample(range(n), 2):
                    ls[i] += f" {key}"
                return ls

            lines = shadowed(rng, lines, twin_lines)
            want = nl([line for line in lines if key in line.split()])
            instr = f"Copy every line of {app(src)} that contains the word '{key}' into {app(out)}, keeping their order."
            sol = f"grep -w {key} {src} > {out}"
        else:
            want = nl(lines[::-1])
            instr = f"Write the lines of {app(src)} in reverse order (last line first) to {app(out)}."
            sol = f"tac {src} > {out}"
        text = nl(lines)
        checks = [
            Check("output_exists", f"assert (APP / {out!r}).is_file()"),
            Check("line_count", f"assert len(lines({out!r})) == {len(want.splitlines())}"),
            Check("first_line", f"assert lines({out!r})[:1] == {want.splitlines()[:1]!r}"),
            Check("content_exact", f"assert read({out!r}) == {want!r}"),
            Check("input_unchanged", f"assert read({src!r}) == {text!r}"),
        ]
        return TaskSpec(FAMILY, difficulty, instr, {src: text}, checks, sol)
    # hard: word frequencies, ties broken alphabetically
    def draw_lines(r):  # the words and their counts: not stated
        pool = r.sample(WORDS, 6)
        return [" ".join(r.choices(pool, weights=[9, 7, 5, 3, 2, 1], k=r.randint(3, 7))) for _ in range(12)]

    lines = hidden(rng, draw_lines)
    text = nl(lines)
    counts = Counter(text.split())
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    want = nl([f"{w} {c}" for w, c in top])
    instr = (
        f"Count how often each word occurs in {app(src)} (words are separated by spaces). Write the three most "
        f"frequent words to {app(out)}, one per line as 'WORD COUNT', most frequent first; break ties alphabetically."
    )
    checks = [
        Check("output_exists", f"assert (APP / {out!r}).is_file()"),
        Check("three_lines", f"assert len(lines({out!r})) == 3"),
        Check("format_word_count", "for line in lines(%r):\n    w, c = line.split()\n    assert c.isdigit()" % out),
        Check("top_word", f"assert lines({out!r})[0].split() == {list(map(str, top[0]))!r}"),
        Check("content_exact", f"assert read({out!r}) == {want!r}"),
    ]
    sol = f"tr ' ' '\\n' < {src} | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{{print $2, $1}}' > {out}"
    return TaskSpec(FAMILY, difficulty, instr, {src: text}, checks, sol)
