"""Archives: extract, create and repack .tar.gz files."""

from __future__ import annotations

import random

from ..spec import Check, TaskSpec
from ._common import Paths, app, fname, phrase, shadowed, targz, words

FAMILY = "archives"

READ_TAR = """import tarfile
def members(rel):
    with tarfile.open(APP / rel, 'r:gz') as t:
        return {m.name.lstrip('./'): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
"""


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    folder = words(rng, 1)[0]
    inner = {f"{folder}/{fname(rng, '.txt', 1)}": phrase(rng, 4) + "\n" for _ in range(rng.randint(2, 3))}
    # the files' contents: not stated (their names may be, as examples)
    inner = shadowed(rng, inner, lambda r: {k: phrase(r, 4) + "\n" for k in inner})
    if difficulty == "easy":
        arc = p(f"{folder}.tar.gz")
        dest = p(rng.choice(["out", "extracted", "unpacked"]))
        instr = f"Extract the archive {app(arc)} into the directory {app(dest)}."
        checks = [Check("dest_exists", f"assert (APP / {dest!r}).is_dir()")]
        for i, (path, text) in enumerate(sorted(inner.items()), 1):
            checks.append(Check(f"file{i}_extracted", f"assert read({dest + '/' + path!r}) == {text!r}"))
        checks.append(Check("archive_kept", f"assert (APP / {arc!r}).is_file()"))
        sol = f"mkdir -p {dest} && tar -xzf {arc} -C {dest}"
        return TaskSpec(FAMILY, difficulty, instr, {arc: targz(inner)}, checks, sol)
    if difficulty == "medium":
        arc = p(f"{folder}_backup.tar.gz")
        files = {p(k): v for k, v in inner.items()}
        instr = (
            f"Create a gzip-compressed tar archive {app(arc)} of the directory {app(p(folder))}; inside the archive "
            f"the paths must start with '{folder}/' (for example {sorted(inner)[0]})."
        )
        checks = [
            Check("archive_exists", f"assert (APP / {arc!r}).is_file()"),
            Check("is_gzip_tar", f"import tarfile\nassert tarfile.is_tarfile(APP / {arc!r})\nassert (APP / {arc!r}).read_bytes()[:2] == b'\\x1f\\x8b'"),
            Check("members_present", READ_TAR + f"assert sorted(members({arc!r})) == {sorted(inner)!r}"),
            Check("contents_match", READ_TAR + f"assert members({arc!r}) == {inner!r}"),
            Check("directory_kept", f"assert (APP / {p(folder)!r}).is_dir()"),
        ]
        where = f"-C {p('')[:-1]} " if p.prefix else ""
        sol = f"tar -czf {arc} {where}{folder}"
        return TaskSpec(FAMILY, difficulty, instr, files, checks, sol)
    # hard: unpack, change one file, add one, repack under a new name
    arc, new = p(f"{folder}.tar.gz"), p(f"{folder}_v2.tar.gz")
    target = rng.choice(sorted(inner))
    extra_line = phrase(rng, 3)
    added = f"{folder}/VERSION"
    want = dict(inner)
    want[target] = inner[target] + extra_line + "\n"
    want[added] = "2\n"
    instr = (
        f"{app(arc)} holds the folder {folder}/. Make a new archive {app(new)} (gzip tar) with the same files, except "
        f"that {target} gets the extra last line '{extra_line}', and a new file {added} containing the single line 2. "
        f"Leave {app(arc)} unchanged."
    )
    checks = [
        Check("new_archive_exists", f"assert (APP / {new!r}).is_file()"),
        Check("is_gzip_tar", f"import tarfile\nassert tarfile.is_tarfile(APP / {new!r})"),
        Check("line_appended", READ_TAR + f"assert members({new!r}).get({target!r}) == {want[target]!r}"),
        Check("version_added", READ_TAR + f"assert members({new!r}).get({added!r}, '').strip() == '2'"),
        Check("other_files_same", READ_TAR + f"m = members({new!r})\nassert {{k: m.get(k) for k in {sorted(set(inner) - {target})!r}}} == {{k: v for k, v in {inner!r}.items() if k != {target!r}}}"),
        Check("old_archive_unchanged", READ_TAR + f"assert members({arc!r}) == {inner!r}"),
    ]
    work = p("work")
    sol = (
        f"mkdir -p {work} && tar -xzf {arc} -C {work}\n"
        f"echo {extra_line!r} >> {work}/{target}\necho 2 > {work}/{added}\n"
        f"tar -czf {new} -C {work} {folder}\nrm -rf {work}"
    )
    return TaskSpec(FAMILY, difficulty, instr, {arc: targz(inner)}, checks, sol)
