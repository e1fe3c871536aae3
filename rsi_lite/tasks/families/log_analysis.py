"""Log analysis: count, extract and rank entries of a web-server style log."""

from __future__ import annotations

import random
from collections import Counter

from ..spec import Check, TaskSpec
from ._common import WORDS, Paths, app, fname, hidden, nl

FAMILY = "log_analysis"

LEVELS = ["INFO", "INFO", "INFO", "WARN", "ERROR"]


def _log(rng: random.Random, n: int) -> list[tuple]:
    ips = [f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}" for _ in range(rng.randint(3, 6))]
    paths = ["/" + w for w in rng.sample(WORDS, 5)]
    rows = []
    for i in range(n):
        rows.append((f"2026-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{i % 60:02d}:00",
                     rng.choice(LEVELS), rng.choice(ips), rng.choice(paths),
                     rng.choice([200, 200, 200, 301, 404, 500])))
    return rows


def _render(rows) -> str:
    return nl([f"{t} {lvl} {ip} GET {path} {status}" for t, lvl, ip, path, status in rows])


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    log = p(rng.choice(["server.log", "access.log", "app.log", "web.log"]))
    out = p(fname(rng, ".txt", 1))
    # the log's entries: not stated
    rows = hidden(rng, lambda r: _log(r, r.randint(12, 20) if difficulty == "easy" else r.randint(25, 45)))
    text = _render(rows)
    base = [Check("output_exists", f"assert (APP / {out!r}).is_file()")]
    if difficulty == "easy":
        level = rng.choice(["ERROR", "WARN"])
        n = sum(1 for r in rows if r[1] == level)
        instr = f"Count the lines of {app(log)} with the level {level} and write the number to {app(out)}."
        checks = base + [
            Check("is_a_number", f"assert read({out!r}).strip().isdigit()"),
            Check("count_correct", f"assert int(read({out!r})) == {n}"),
        ]
        sol = f"grep -c ' {level} ' {log} > {out} || true"
    elif difficulty == "medium":
        if rng.random() < 0.5:
            ips = sorted({r[2] for r in rows})
            instr = f"Write every distinct client IP address found in {app(log)} to {app(out)}, one per line, sorted."
            checks = base + [
                Check("distinct_count", f"assert len(lines({out!r})) == {len(ips)}"),
                Check("no_duplicates", f"assert len(set(lines({out!r}))) == len(lines({out!r}))"),
                Check("content_exact", f"assert lines({out!r}) == {ips!r}"),
            ]
            sol = f"awk '{{print $3}}' {log} | sort -u > {out}"
        else:
            status = rng.choice([404, 500])
            n = sum(1 for r in rows if r[4] == status)
            paths = sorted({r[3] for r in rows if r[4] == status})
            instr = (
                f"Find the requests in {app(log)} that got status {status}. Write their count on the first line of "
                f"{app(out)}, then the distinct paths of those requests, one per line, sorted."
            )
            checks = base + [
                Check("count_line", f"assert lines({out!r})[0].strip() == {str(n)!r}"),
                Check("paths_listed", f"assert lines({out!r})[1:] == {paths!r}"),
            ]
            sol = f"{{ awk '$6 == {status}' {log} | wc -l; awk '$6 == {status} {{print $5}}' {log} | sort -u; }} > {out}"
    else:
        counts = Counter(r[3] for r in rows)
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        hours = Counter(r[0][11:13] for r in rows if r[1] == "ERROR")
        instr = (
            f"Analyse {app(log)}. Write the three most requested paths to {app(out)} as 'COUNT PATH' lines, most "
            f"requested first, ties broken alphabetically by path. Also write to {app(p('errors_by_hour.txt'))} "
            f"one line 'HH COUNT' for every hour (00-23) that has ERROR entries, sorted by hour."
        )
        want_hours = nl([f"{h} {c}" for h, c in sorted(hours.items())])
        eh = p("errors_by_hour.txt")
        checks = base + [
            Check("three_lines", f"assert len(lines({out!r})) == 3"),
            Check("top_path", f"assert lines({out!r})[0].split() == {[str(top[0][1]), top[0][0]]!r}"),
            Check("ranking_exact", f"assert [l.split() for l in lines({out!r})] == {[[str(c), q] for q, c in top]!r}"),
            Check("hours_file_exists", f"assert (APP / {eh!r}).is_file()"),
            Check("hours_exact", f"assert read({eh!r}) == {want_hours!r}"),
        ]
        sol = (
            f"awk '{{print $5}}' {log} | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{{print $1, $2}}' > {out}\n"
            f"awk '$2 == \"ERROR\" {{print substr($1, 12, 2)}}' {log} | sort | uniq -c | awk '{{print $2, $1}}' > {eh}"
        )
    checks.append(Check("log_unchanged", f"assert read({log!r}) == {text!r}"))
    return TaskSpec(FAMILY, difficulty, instr, {log: text}, checks, sol)
