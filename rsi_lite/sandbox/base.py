"""The sandbox interface, and the persistent-shell protocol every backend shares.

An episode is one interactive bash in a terminal, as in Terminus 2: `cd` and `export`
persist from one command to the next. A command travels as a file that the shell
`source`s (so quotes, heredocs and syntax errors stay inside it), followed by a line that
prints a random sentinel with the exit status:

    source /run/rsi/cmd7.sh < /dev/null; printf '\\036RSI<nonce>:%d\\036\\n' $?

Past its timeout the command gets Ctrl-C, as a person at the terminal would send; if it
still does not yield, every process in the sandbox but the keeper is killed, and the keeper
starts a fresh shell. A shell that exits (an `exit` in a command) is restarted the same way.
The workspace survives both.
"""

from __future__ import annotations

import os
import re
import secrets
import select
import shlex
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from ..tasks.task import EnvironmentSpec

RESPAWN = re.compile(rb"\x1eRSIEXIT:(\d+)\x1e\n?")
STALE = re.compile(rb"\x1eRSI[0-9a-f]{16}:\d+\x1e\n?")  # a sentinel left over from an interrupted command
_KEEPER_LOOP = (
    # (PS1 is set on the inner shell's line: a non-interactive bash drops it from the environment)
    "cd \"$RSI_WORKDIR\" 2>/dev/null; while :; do PS1= PS2= bash --norc --noprofile --noediting -i; "
    "printf '\\036RSIEXIT:%d\\036\\n' $? || exit; cd \"$RSI_WORKDIR\" 2>/dev/null; done"
)


def keeper_command(limits: "SandboxLimits", *, limit_processes: bool = True) -> list[str]:
    """The sandbox's long-lived process: sets the limits, then restarts the interactive shell
    whenever it exits or is killed, so the limits hold for every shell it ever starts. Once nobody reads it (its
    terminal closed, its owner gone) the restart notice cannot be written and the loop ends, where it would
    otherwise restart a shell that reads end-of-file at once, without end."""
    return ["bash", "--norc", "--noprofile", "-c", limits.ulimit_line(limit_processes) + "; " + _KEEPER_LOOP]


SHELL_ENV = {"TERM": "dumb", "LANG": "C.UTF-8", "HISTFILE": "/dev/null"}


class SandboxError(RuntimeError):
    pass


@dataclass
class SandboxLimits:
    """Resource limits of one sandbox. Sizes in MiB, times in seconds."""

    command_timeout: float = 30.0
    """Default per-command timeout; past it the command gets Ctrl-C."""
    output_bytes: int = 10_000
    """Output kept per command: the first and last halves, as Terminus 2 keeps them."""
    max_processes: int = 128
    """Processes the sandbox user may run at once (stops fork bombs)."""
    memory_mb: int = 4096
    """Address space per process (RLIMIT_AS)."""
    file_size_mb: int = 64
    """Largest file a process may write (RLIMIT_FSIZE)."""
    app_size_mb: int = 256
    """Size of the /app workspace (a tmpfs in the bubblewrap backend)."""
    tmp_size_mb: int = 128
    """Size of /tmp."""
    grace: float = 2.0
    """Seconds a command gets after Ctrl-C before its processes are killed."""

    def ulimit_line(self, limit_processes: bool = True) -> str:
        nproc = f"ulimit -u {self.max_processes}; " if limit_processes else ""
        return f"{nproc}ulimit -f {self.file_size_mb * 1024} -v {self.memory_mb * 1024} -c 0"


@dataclass
class CommandResult:
    command: str
    output: str
    exit_code: int | None
    """None when the command was interrupted and no status came back."""
    timed_out: bool = False
    duration: float = 0.0
    truncated_bytes: int = 0
    """Bytes dropped from the middle of the output."""
    shell_restarted: bool = False

    def for_model(self) -> str:
        """The terminal text an agent is shown for this command."""
        notes = []
        if self.timed_out:
            notes.append(f"[command timed out after {self.duration:.0f}s and was interrupted]")
        if self.shell_restarted:
            notes.append("[the shell exited; a new shell was started in the working directory]")
        return self.output + ("\n" if self.output and not self.output.endswith("\n") and notes else "") + "\n".join(notes)


class OutputCap:
    """Keeps the first and last `limit/2` bytes of a stream, counting what falls in between."""

    def __init__(self, limit: int):
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > self.half:
            cut = len(self.tail) - self.half
            self.dropped += cut
            del self.tail[:cut]

    def text(self) -> str:
        mid = f"\n[... {self.dropped} bytes of output omitted ...]\n".encode() if self.dropped else b""
        return bytes(self.head + mid + self.tail).decode("utf-8", "replace").replace("\r\n", "\n")


class Sandbox(ABC):
    """One isolated workspace with a persistent shell.

    Use as a context manager: `with make_sandbox(task) as sb: sb.exec("ls")`.
    Paths given to `upload`, `download` and `read_file` are paths inside the sandbox.
    """

    backend: str = "abstract"

    def __init__(self, environment: EnvironmentSpec | None = None, limits: SandboxLimits | None = None,
                 *, verifier: bool = False):
        self.environment = environment or EnvironmentSpec()
        self.limits = limits or SandboxLimits()
        self.verifier = verifier
        """A verifier sandbox has a /tests folder; an agent's has none, except under Harbor's shared verifier
        mode (`verify.verify_in_place`), where the tests run in the agent's sandbox after it."""
        self._n = 0
        self._started = False
        self._buffer = bytearray()
        self.command_seconds = 0.0

    # -- what a backend provides -------------------------------------------------------
    @abstractmethod
    def _launch(self) -> None:
        """Create the sandbox, start the keeper shell, and connect the terminal channel."""

    @abstractmethod
    def _write(self, data: bytes) -> None:
        """Send keystrokes to the terminal."""

    @abstractmethod
    def _read(self, timeout: float) -> bytes | None:
        """Terminal output within `timeout` seconds (b'' if none yet); None once the terminal is gone."""

    @abstractmethod
    def _put_file(self, dest: str, data: bytes, mode: int = 0o644) -> None:
        """Write one file inside the sandbox (parents created)."""

    @abstractmethod
    def upload(self, src: Path, dest: str) -> None:
        """Copy a host file or directory into the sandbox at `dest`, modes kept."""

    @abstractmethod
    def download(self, src: str, dest: Path) -> None:
        """Copy a sandbox directory to the host: regular files, folders and symlinks (never followed)."""

    @abstractmethod
    def read_file(self, path: str) -> bytes | None:
        """A regular file's bytes, or None if it is missing or not a regular file."""

    @abstractmethod
    def _kill_all_but_keeper(self) -> None:
        """Kill every process in the sandbox except the keeper loop (and the init process)."""

    @abstractmethod
    def _teardown(self) -> None:
        """Destroy the sandbox and everything running in it."""

    def shell_path(self, path: str) -> str:
        """`path` as the sandbox's shell sees it (the same, except in the local backend)."""
        return path

    def _initial_copies(self) -> list:
        """The Dockerfile's COPY lines, replayed at start (the Docker backend builds them into the image)."""
        return self.environment.copies

    # -- the shared protocol -----------------------------------------------------------
    def start(self) -> "Sandbox":
        if self._started:
            return self
        self._launch()
        self._started = True
        for src, dest in self._initial_copies():
            self.upload(src, dest)
        ready = self.exec("true", timeout=20)
        if ready.exit_code != 0:
            raise SandboxError(f"{self.backend} sandbox did not start: {ready.output[-500:]}")
        return self

    def exec(self, command: str, timeout: float | None = None) -> CommandResult:
        if not self._started:
            raise SandboxError("sandbox not started; call start() or use it as a context manager")
        timeout = self.limits.command_timeout if timeout is None else timeout
        self._n += 1
        nonce = secrets.token_hex(8)
        path = f"/run/rsi/cmd{self._n}.sh"
        try:
            self._put_file(path, command.encode() + b"\n", 0o644)
        except OSError as err:  # its file tree went with it: an earlier command killed the sandbox's shell
            raise SandboxError(f"the sandbox is gone (did a command kill its shell?): {err}") from err
        t0 = time.monotonic()
        self._write(f" source {self.shell_path(path)} < /dev/null; printf '\\036RSI{nonce}:%d\\036\\n' $?\n".encode())
        cap = OutputCap(self.limits.output_bytes)
        code, restarted, status = self._collect(nonce, cap, t0 + timeout)
        timed_out = status == "timeout"
        if timed_out:
            code, restarted = self._interrupt(cap)
        duration = time.monotonic() - t0
        self.command_seconds += duration
        return CommandResult(command, cap.text(), code, timed_out, duration, cap.dropped, restarted)

    def _collect(self, nonce: str, cap: OutputCap, deadline: float) -> tuple[int | None, bool, str]:
        """Read until the sentinel (status 'done'), a shell restart ('restarted') or the deadline."""
        sentinel = re.compile(rb"\x1eRSI" + nonce.encode() + rb":(\d+)\x1e\n?")
        buf = self._buffer
        while True:
            m = sentinel.search(buf)
            r = RESPAWN.search(buf)
            if m and (not r or m.start() < r.start()):
                code = int(m.group(1))  # read before the buffer shrinks under the match
                cap.add(STALE.sub(b"", bytes(buf[: m.start()])))
                del buf[: m.end()]
                return code, False, "done"
            if r:
                code = int(r.group(1))
                cap.add(STALE.sub(b"", bytes(buf[: r.start()])))
                del buf[: r.end()]
                return code, True, "restarted"
            # complete sentinels here are stale ones; everything up to a possible partial
            # sentinel at the end can go to the cap now
            buf[:] = STALE.sub(b"", bytes(buf))
            keep = buf.find(b"\x1e", max(0, len(buf) - 64))
            keep = keep if keep >= 0 else len(buf)
            cap.add(bytes(buf[:keep]))
            del buf[:keep]
            left = deadline - time.monotonic()
            if left <= 0:
                return None, False, "timeout"
            chunk = self._read(min(left, 0.5))
            if chunk is None:
                raise SandboxError(f"{self.backend} sandbox terminal closed")
            buf += chunk

    def _interrupt(self, cap: OutputCap) -> tuple[int | None, bool]:
        """Ctrl-C, then a fresh sentinel; past the grace period, kill all but the keeper."""
        self._write(b"\x03")
        time.sleep(0.05)
        nonce = secrets.token_hex(8)
        self._write(f" printf '\\036RSI{nonce}:%d\\036\\n' 130\n".encode())
        code, restarted, status = self._collect(nonce, cap, time.monotonic() + self.limits.grace)
        if status != "timeout":
            return code, restarted
        self._kill_all_but_keeper()
        nonce = secrets.token_hex(8)
        self._write(f" printf '\\036RSI{nonce}:%d\\036\\n' 137\n".encode())
        code, restarted, status = self._collect(nonce, cap, time.monotonic() + 10)
        if status == "timeout":
            raise SandboxError(f"{self.backend} sandbox did not recover after killing its processes")
        return (code, restarted) if restarted else (137, True)

    def close(self) -> None:
        if self._started:
            self._started = False
            self._teardown()

    def __enter__(self) -> "Sandbox":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def freeze_and_kill(list_pids) -> None:
    """Stop every listed process until no new one appears, then kill them all at once.

    Stopped processes cannot fork, so a fork bomb cannot outrun this; and processes started
    after the kill (the keeper's fresh shell) are never in the list.
    """
    stopped: set[int] = set()
    for _ in range(200):
        new = set(list_pids()) - stopped
        if not new:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        stopped |= new
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def read_pty(fd: int, timeout: float) -> bytes | None:
    """Read what a pty master has within `timeout`; None when the other side is gone."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return b""
    try:
        data = os.read(fd, 65536)
    except OSError:  # EIO: every slave end closed
        return None
    return data or None


def workspace_state(sb, workdir: str) -> dict[str, tuple]:
    """path -> (type and mode, link target, content hash) of everything under `workdir` in the sandbox: two
    states compare equal when the workspace did not change (a reference's outputs, a passing prefix's)."""
    w = shlex.quote(sb.shell_path(workdir))
    meta = sb.exec(f"cd {w} && find . -mindepth 1 -printf '%y%m %p\\t%l\\n'").output.splitlines()
    sums = sb.exec(f"cd {w} && find . -mindepth 1 -type f -exec sha256sum {{}} +").output.splitlines()
    state = {}
    for line in meta:
        if " " in line and "\t" in line:
            kind, rest = line.split(" ", 1)
            path, link = rest.split("\t", 1)
            state[path] = (kind, link, "")
    for line in sums:
        digest, _, path = line.partition("  ")
        if path in state:
            state[path] = state[path][:2] + (digest,)
    return state
