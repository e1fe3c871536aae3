"""The default backend: bubblewrap, no daemon, no image, starts in milliseconds.

The sandbox sees the host's system read-only (/usr, /etc and the Python environment that
runs the verifier), its own /proc and /dev, and three small private tmpfs mounts: the
workspace (/app), /tmp and /logs. Every namespace is unshared, so there is no network. Run
as root, the sandbox drops to an unprivileged user id of its own: the kernel does not apply
RLIMIT_NPROC to root, and that limit is what stops a fork bomb.

The host reaches into the sandbox's file tree through /proc/<pid>/root, so files travel in
and out without a shared host folder the agent could fill or plant links in.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..tasks.task import missing_packages
from .base import SHELL_ENV, SandboxError, freeze_and_kill, keeper_command, read_pty
from .pty_tree import PtyTreeSandbox

UID_BASE = 200_000
_uids = itertools.count()


def _sandbox_uid() -> int:
    """A user id for one sandbox alone. RLIMIT_NPROC counts every process of a uid on the machine,
    so sandboxes sharing one uid (say `nobody`) would share one process budget: one fork bomb
    would starve every other episode and the verifier."""
    return UID_BASE + (os.getpid() % 1000) * 1000 + next(_uids) % 1000


@functools.lru_cache(maxsize=1)
def bwrap_available() -> str | None:
    """None if bubblewrap can run a sandbox here, else the reason it cannot."""
    exe = shutil.which("bwrap")
    if not exe:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    unshare = ["--unshare-pid", "--unshare-net"] if os.geteuid() == 0 else ["--unshare-all"]
    r = subprocess.run([exe, *unshare, "--ro-bind", "/", "/", "true"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"bwrap cannot create namespaces here: {r.stderr.strip()[:200]}"
    return None


def _python_roots() -> list[str]:
    """The host folders the sandbox's `python3` and `pytest` come from (this environment)."""
    roots = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))]
    return [r for r in dict.fromkeys(roots) if not r.startswith(("/usr", "/etc")) and os.path.isdir(r)]


class BubblewrapSandbox(PtyTreeSandbox):
    backend = "bwrap"

    def _layout(self) -> list[str]:
        lim = self.limits
        work = self.environment.workdir
        if self._owner:
            # as root: no user namespace (its kuid would stay 0, which RLIMIT_NPROC exempts); the
            # keeper drops to a uid of its own, with the two capabilities that takes and no others
            args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                    "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args = ["--unshare-all"]
        args += ["--die-with-parent", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for top in ("bin", "sbin", "lib", "lib64", "lib32"):
            p = Path("/") / top
            if p.is_symlink():
                args += ["--symlink", os.readlink(p), str(p)]
            elif p.is_dir():
                args += ["--ro-bind", str(p), str(p)]
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", str(lim.tmp_size_mb << 20), "--tmpfs", "/tmp",
                 "--size", str(lim.app_size_mb << 20), "--tmpfs", work,
                 "--size", str(16 << 20), "--tmpfs", "/logs", "--dir", "/logs/verifier",
                 "--size", str(8 << 20), "--tmpfs", "/run", "--dir", "/run/rsi"]
        if self.verifier:
            args += ["--size", str(64 << 20), "--tmpfs", "/tests"]
        # Python comes last, so a virtual environment under /tmp is not hidden by the /tmp mount
        made = {"/", "/usr", "/etc", "/tmp", "/run", "/logs", work}
        for root in _python_roots():
            # bwrap makes missing parents 0700; the sandbox user must be able to walk down to Python
            for q in (str(q) for q in reversed(Path(root).parents)):
                if q not in made:
                    args += ["--dir", q]
                    made.add(q)
            args += ["--ro-bind", root, root]
        args += ["--remount-ro", "/", "--chdir", work, "--clearenv"]
        path = ":".join([os.path.join(sys.prefix, "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
        env = {**SHELL_ENV, "PATH": path, "HOME": "/tmp", "RSI_WORKDIR": work, **self.environment.env}
        for k, v in env.items():
            args += ["--setenv", k, v]
        return args

    def _check_supported(self) -> None:
        if self.environment.unsupported:
            no, line = self.environment.unsupported[0]
            raise SandboxError(
                f"environment/Dockerfile line {no} ({line.split()[0]}) changes the image, which the bubblewrap "
                f"backend cannot replay; run this task with the Docker backend (--backend docker)")
        missing = missing_packages(self.environment)
        if missing:
            no, pkg = missing[0]
            raise SandboxError(
                f"environment/Dockerfile line {no} installs {pkg}, which this host does not have; the bubblewrap "
                f"backend uses the host's packages (install it here, or use --backend docker)")
        work = self.environment.workdir.rstrip("/")
        for _, dest in self.environment.copies:
            if not (dest == work or dest.startswith(work + "/") or dest.startswith("/tmp/")):
                raise SandboxError(
                    f"environment/Dockerfile copies into {dest}, outside the workspace {work}; the bubblewrap "
                    f"backend only provides the workspace and /tmp: use the Docker backend (--backend docker)")

    def _launch(self) -> None:
        self._check_supported()
        exe = shutil.which("bwrap")
        if not exe:
            raise SandboxError("bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
        uid = _sandbox_uid()
        self._owner = (uid, uid) if os.geteuid() == 0 else None
        slave = self._open_pty()
        master = self._fd
        info_r, info_w = os.pipe()

        keeper = keeper_command(self.limits)
        if self._owner:
            keeper = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                      "--inh-caps=-all", "--bounding-set=-all", *keeper]
        # `setsid --ctty`: a new session whose controlling terminal is the pty (Ctrl-C works). Done by a program, not
        # a preexec_fn: with a preexec_fn Python must fork the whole caller, ~150 ms for a process holding a model of
        # 3 GB, stalling its decoding each time a sandbox starts; without one it spawns the child with vfork.
        cmd = ["setsid", "--ctty", exe, *self._layout(), "--info-fd", str(info_w), *keeper]
        try:
            self._proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                          pass_fds=(info_w,))
        finally:
            os.close(slave)
            os.close(info_w)
        with os.fdopen(info_r) as f:
            info = f.read()
        if not info:
            out = read_pty(master, 1.0) or b""
            self._proc.kill()
            raise SandboxError(f"bwrap failed to start: {out.decode(errors='replace')[-500:]}")
        self._init_pid = json.loads(info)["child-pid"]
        self._root = Path(f"/proc/{self._init_pid}/root")
        deadline = time.monotonic() + 5
        while not (self._root / "run/rsi").is_dir():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                out = (read_pty(master, 0.5) or b"").decode(errors="replace")
                self._proc.kill()
                raise SandboxError(f"bwrap sandbox did not come up: {out[-500:]}")
            time.sleep(0.01)
        self._keeper_pid = self._find_keeper()
        # the command folder belongs to the host side: the agent may read it, not rewrite it
        os.chmod(self._root / "run/rsi", 0o755)
        if self._owner:  # the writable mounts belong to the sandbox user
            for d in (self.environment.workdir, "/logs", "/logs/verifier"):
                os.chown(self._host(d), *self._owner)

    def _host(self, path: str) -> Path:
        if not path.startswith("/"):
            path = f"{self.environment.workdir.rstrip('/')}/{path}"
        return self._root / path.lstrip("/")

    def _sandbox_pids(self) -> list[int]:
        ns = os.readlink(f"/proc/{self._init_pid}/ns/pid")
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != self._init_pid:
                try:
                    if os.readlink(f"/proc/{entry}/ns/pid") == ns:
                        pids.append(int(entry))
                except OSError:
                    continue
        return pids

    def _find_keeper(self, wait: float = 10.0) -> int:
        """The init's first child, found at launch (the mounts exist a moment before it is forked).
        Orphans are reparented to the init later, so "a child of init" stops meaning "the keeper"
        once an agent has left processes behind."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            for pid in self._sandbox_pids():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == self._init_pid:
                            return pid
                except OSError:
                    continue
            time.sleep(0.005)
        raise SandboxError("bwrap sandbox: the keeper process did not start")

    def _kill_all_but_keeper(self) -> None:
        freeze_and_kill(lambda: [p for p in self._sandbox_pids() if p != self._keeper_pid])

    def _teardown(self) -> None:
        # kill the sandbox's init first, so the outer bwrap reaps it and exits; killing the outer
        # one first would orphan the init to a PID 1 that may never reap it
        try:
            os.kill(self._init_pid, signal.SIGKILL)
        except (ProcessLookupError, AttributeError):
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5)
        try:
            os.close(self._fd)
        except OSError:
            pass
