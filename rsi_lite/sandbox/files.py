"""Host-side copies into and out of a sandbox's file tree, safe against what an agent leaves there.

A workspace is untrusted: copying it out never follows a symlink (links are recreated as
links), skips fifos, sockets and devices (reading a fifo would hang), and stops at a byte
budget, so a workspace cannot make the host read or write outside the copy.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path


class CopyLimitExceeded(RuntimeError):
    pass


def copy_out(src: Path, dest: Path, *, max_bytes: int) -> int:
    """Copy the tree at `src` to `dest` (created); return the bytes copied."""
    total = 0
    st = os.lstat(src)
    if stat.S_ISREG(st.st_mode):
        return _copy_file(src, dest, st, max_bytes)
    if not stat.S_ISDIR(st.st_mode):
        raise FileNotFoundError(f"{src}: not a directory or regular file")
    dest.mkdir(parents=True, exist_ok=True)
    for root, dirs, files in os.walk(src, followlinks=False):
        rel = Path(root).relative_to(src)
        out = dest / rel
        for name in dirs + files:
            s = Path(root) / name
            d = out / name
            st = os.lstat(s)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(s), d)
            elif stat.S_ISDIR(st.st_mode):
                d.mkdir(exist_ok=True)
                os.chmod(d, stat.S_IMODE(st.st_mode) | 0o700)
            elif stat.S_ISREG(st.st_mode):
                total += _copy_file(s, d, st, max_bytes - total)
        dirs[:] = [n for n in dirs if not os.path.islink(os.path.join(root, n))]
    return total


def _copy_file(src: Path, dest: Path, st: os.stat_result, budget: int) -> int:
    """Copy one regular file, reading at most `budget` bytes (it may still be growing)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    copied = 0
    with os.fdopen(fd, "rb") as f, open(dest, "wb") as g:
        while chunk := f.read(1 << 20):
            copied += len(chunk)
            if copied > budget:
                raise CopyLimitExceeded(f"{src}: copying it would exceed the copy budget")
            g.write(chunk)
    os.chmod(dest, stat.S_IMODE(st.st_mode))
    return copied


def _makedirs(path: Path, owner: tuple[int, int] | None) -> None:
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for d in reversed(missing):
        d.mkdir()
        if owner:
            os.lchown(d, *owner)


def copy_in(src: Path, dest: Path, *, owner: tuple[int, int] | None = None) -> None:
    """Copy a trusted host file or tree into a sandbox tree, keeping modes; chown to `owner` if given."""
    _makedirs(dest.parent, owner)
    if src.is_dir():
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dest, follow_symlinks=False)
    if owner:
        for p in [dest, *(dest.rglob("*") if dest.is_dir() else [])]:
            os.lchown(p, *owner)
