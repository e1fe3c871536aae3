"""What the bubblewrap and local backends share: a pty the host owns, and a file tree the
host reaches by path (`_host`): /proc/<pid>/root inside bubblewrap, a temp folder locally."""

from __future__ import annotations

import os
import pty
import termios
from pathlib import Path

from .base import Sandbox, read_pty
from .files import copy_in, copy_out


class PtyTreeSandbox(Sandbox):
    _owner: tuple[int, int] | None = None
    """Who owns what the host copies in (the sandbox user, when the host is root)."""

    def _host(self, path: str) -> Path:
        raise NotImplementedError

    def _open_pty(self) -> int:
        """A pty whose slave neither echoes what we type nor turns \\n into \\r\\n; returns the slave fd."""
        master, slave = pty.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.ONLCR  # oflag
        attrs[3] &= ~termios.ECHO  # lflag
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        self._fd = master
        return slave

    def _write(self, data: bytes) -> None:
        os.write(self._fd, data)

    def _read(self, timeout: float) -> bytes | None:
        return read_pty(self._fd, timeout)

    def _put_file(self, dest: str, data: bytes, mode: int = 0o644) -> None:
        host = self._host(dest)
        tmp = host.with_name(host.name + ".tmp")
        tmp.write_bytes(data)
        os.chmod(tmp, mode)
        os.replace(tmp, host)

    def upload(self, src: Path, dest: str) -> None:
        copy_in(Path(src), self._host(dest), owner=self._owner)

    def download(self, src: str, dest: Path) -> None:
        copy_out(self._host(src), Path(dest), max_bytes=self.limits.app_size_mb << 20)

    def read_file(self, path: str) -> bytes | None:
        try:
            fd = os.open(self._host(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            if not os.path.isfile(f"/proc/self/fd/{f.fileno()}") and os.path.isdir("/proc/self/fd"):
                return None
            return f.read(self.limits.file_size_mb << 20)
