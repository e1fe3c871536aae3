"""Data wrangling: count, sum, filter, group and convert CSV and JSON files."""

from __future__ import annotations

import random

from ..spec import Check, TaskSpec
from ._common import CITIES, NAMES, Paths, app, fname, nl, shadowed

FAMILY = "data_csv"


def _table(rng: random.Random, n: int) -> tuple[list[str], list[list]]:
    header = ["name", "city", rng.choice(["score", "amount", "points"])]
    people = rng.sample(NAMES, n)
    return header, [[who, rng.choice(CITIES[:5]), rng.randint(1, 99)] for who in people]


def _twin_rows(r: random.Random, rows: list[list]) -> list[list]:
    """A shadow's table: the same people (a name the instruction states is still there), one to three more,
    in another order, with other cities and values."""
    people = [row[0] for row in rows] + r.sample([n for n in NAMES if n not in {row[0] for row in rows}], r.randint(1, 3))
    r.shuffle(people)
    return [[who, r.choice(CITIES[:5]), r.randint(1, 99)] for who in people]


def _csv(header, rows) -> str:
    return nl([",".join(header)] + [",".join(map(str, r)) for r in rows])


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    src = p(fname(rng, ".csv"))
    header, stated = _table(rng, rng.randint(5, 9) if difficulty == "easy" else rng.randint(9, 16))
    rows = shadowed(rng, stated, lambda r: _twin_rows(r, stated))  # the data; `stated` gives what is stated
    col = header[2]
    text = _csv(header, rows)
    if difficulty == "easy":
        out = p(fname(rng, ".txt", 1))
        if rng.random() < 0.5:
            want = str(len(rows))
            instr = f"Count the data rows of {app(src)} (do not count the header line) and write the number to {app(out)}."
            sol = f"tail -n +2 {src} | wc -l > {out}"
        else:
            name = rng.choice(stated)[0]
            who = next(r for r in rows if r[0] == name)
            want = str(who[2])
            instr = f"In {app(src)}, find the {col} of {who[0]} and write just that number to {app(out)}."
            sol = f"grep '^{who[0]},' {src} | cut -d, -f3 > {out}"
        checks = [
            Check("output_exists", f"assert (APP / {out!r}).is_file()"),
            Check("is_a_number", f"assert read({out!r}).strip().isdigit()"),
            Check("value_correct", f"assert read({out!r}).strip() == {want!r}"),
            Check("input_unchanged", f"assert read({src!r}) == {text!r}"),
        ]
        return TaskSpec(FAMILY, difficulty, instr, {src: text}, checks, sol)
    if difficulty == "medium":
        if rng.random() < 0.5:
            out = p(fname(rng, ".txt", 1))
            want = str(sum(r[2] for r in rows))
            instr = f"Add up the '{col}' column of {app(src)} and write the total to {app(out)}."
            sol = f"awk -F, 'NR>1 {{s+=$3}} END {{print s}}' {src} > {out}"
            checks = [
                Check("output_exists", f"assert (APP / {out!r}).is_file()"),
                Check("is_a_number", f"assert read({out!r}).strip().lstrip('-').isdigit()"),
                Check("total_correct", f"assert int(read({out!r})) == {want}"),
            ]
        else:
            out = p(src.rsplit("/", 1)[-1].replace(".csv", ".json"))
            want = [{"name": r[0], "city": r[1], col: r[2]} for r in rows]
            instr = (
                f"Convert {app(src)} to JSON: write to {app(out)} a list with one object per row, keyed by the "
                f"header names, keeping the rows' order. The '{col}' values must be numbers, the rest strings."
            )
            sol = (
                f"python3 -c \"import csv,json; rows=list(csv.DictReader(open('{src}')));\n"
                f"[r.update({col}=int(r['{col}'])) for r in rows]; json.dump(rows, open('{out}','w'))\""
            )
            checks = [
                Check("output_exists", f"assert (APP / {out!r}).is_file()"),
                Check("valid_json_list", f"assert isinstance(json.loads(read({out!r})), list)"),
                Check("row_count", f"assert len(json.loads(read({out!r}))) == {len(rows)}"),
                Check("numbers_are_numbers", f"assert all(isinstance(r[{col!r}], int) for r in json.loads(read({out!r})))"),
                Check("content_exact", f"assert json.loads(read({out!r})) == {want!r}"),
            ]
        checks.append(Check("input_unchanged", f"assert read({src!r}) == {text!r}"))
        return TaskSpec(FAMILY, difficulty, instr, {src: text}, checks, sol)
    # hard: group by city and sum, or filter by threshold
    if rng.random() < 0.5:
        out = p("summary.csv")
        sums: dict[str, int] = {}
        for r in rows:
            sums[r[1]] = sums.get(r[1], 0) + r[2]
        want = nl([f"city,total_{col}"] + [f"{c},{s}" for c, s in sorted(sums.items())])
        instr = (
            f"From {app(src)}, write {app(out)} with the header 'city,total_{col}' and one row per city giving "
            f"the sum of '{col}' for that city, cities sorted alphabetically."
        )
        sol = (
            f"{{ echo 'city,total_{col}'; tail -n +2 {src} | awk -F, '{{s[$2]+=$3}} END{{for (c in s) print c\",\"s[c]}}' | sort; }} > {out}"
        )
        checks = [
            Check("output_exists", f"assert (APP / {out!r}).is_file()"),
            Check("header", f"assert lines({out!r})[0] == 'city,total_{col}'"),
            Check("one_row_per_city", f"assert len(lines({out!r})) == {len(sums) + 1}"),
            Check("sorted_by_city", f"rows = [l.split(',')[0] for l in lines({out!r})[1:]]\nassert rows == sorted(rows)"),
            Check("totals_correct", f"assert read({out!r}) == {want!r}"),
        ]
    else:
        out = p("filtered.csv")
        t = sorted(r[2] for r in stated)[len(stated) // 2]
        keep = [r for r in rows if r[2] > t]
        want = _csv(header, keep)
        instr = (
            f"Write to {app(out)} the rows of {app(src)} whose '{col}' is greater than {t}, keeping the header line "
            f"and the original row order."
        )
        sol = f"awk -F, 'NR==1 || $3 > {t}' {src} > {out}"
        checks = [
            Check("output_exists", f"assert (APP / {out!r}).is_file()"),
            Check("header_kept", f"assert lines({out!r})[0] == {','.join(header)!r}"),
            Check("row_count", f"assert len(lines({out!r})) == {len(keep) + 1}"),
            Check("all_above_threshold", f"assert all(int(l.split(',')[2]) > {t} for l in lines({out!r})[1:])"),
            Check("content_exact", f"assert read({out!r}) == {want!r}"),
        ]
    checks.append(Check("input_unchanged", f"assert read({src!r}) == {text!r}"))
    return TaskSpec(FAMILY, difficulty, instr, {src: text}, checks, sol)
