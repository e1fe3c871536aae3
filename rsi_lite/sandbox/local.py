"""The local backend: the same shell protocol straight on the host, with no isolation at all.

For machines with neither bubblewrap nor Docker (a macOS laptop, say), and only when asked
for by name. The workspace is a temporary folder; tasks find it through $APP_DIR, and the
verifier through $TESTS_DIR and $VERIFIER_LOGS_DIR, which every generated task honours.
An agent's `cd /app` or any other absolute path reaches the real host.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from .base import SHELL_ENV, freeze_and_kill, keeper_command
from .pty_tree import PtyTreeSandbox


class LocalSandbox(PtyTreeSandbox):
    backend = "local"

    def _launch(self) -> None:
        warnings.warn("local sandbox: commands run on this machine with no isolation, no network block "
                      "and no resource limits beyond ulimit", stacklevel=3)
        self._dir = Path(tempfile.mkdtemp(prefix="rsi-local-"))
        self._map = {self.environment.workdir.rstrip("/") or "/app": self._dir / "app", "/tests": self._dir / "tests",
                     "/logs": self._dir / "logs", "/run/rsi": self._dir / "run", "/tmp": self._dir / "tmp"}
        for d in self._map.values():
            d.mkdir()
        (self._dir / "logs" / "verifier").mkdir()
        slave = self._open_pty()
        work = str(self._map[self.environment.workdir.rstrip("/") or "/app"])
        env = {**SHELL_ENV, "PATH": os.pathsep.join([os.path.join(sys.prefix, "bin"), os.environ.get("PATH", "/usr/bin:/bin")]), "HOME": str(self._dir / "tmp"),
               "TMPDIR": str(self._dir / "tmp"), "RSI_WORKDIR": work, "APP_DIR": work,
               "TESTS_DIR": str(self._dir / "tests"), "VERIFIER_LOGS_DIR": str(self._dir / "logs" / "verifier"),
               **self.environment.env}
        # no process limit here: outside a namespace it would count every process of the user
        keeper = keeper_command(self.limits, limit_processes=False)
        self._proc = subprocess.Popen(keeper, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=work,
                                      start_new_session=True)
        os.close(slave)

    def _host(self, path: str) -> Path:
        if not path.startswith("/"):
            path = f"{self.environment.workdir.rstrip('/')}/{path}"
        for prefix in sorted(self._map, key=len, reverse=True):
            if path == prefix or path.startswith(prefix + "/"):
                return self._map[prefix] / path[len(prefix):].lstrip("/")
        raise ValueError(f"local sandbox: {path} is outside the sandbox's folders ({', '.join(self._map)})")

    def shell_path(self, path: str) -> str:
        return str(self._host(path))

    def _session_pids(self) -> list[int]:
        keeper, out = self._proc.pid, []
        for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
            if entry.isdigit() and int(entry) != keeper:
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[3]) == keeper:  # same session
                            out.append(int(entry))
                except (OSError, ValueError, IndexError):
                    continue
        return out

    def _kill_all_but_keeper(self) -> None:
        if os.path.isdir("/proc"):
            freeze_and_kill(self._session_pids)
            return
        try:  # no /proc (macOS): at least the foreground job
            pgrp = os.tcgetpgrp(self._fd)
            if pgrp != self._proc.pid:
                os.killpg(pgrp, signal.SIGKILL)
        except OSError:
            pass

    def _teardown(self) -> None:
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self._proc.wait(timeout=10)
        os.close(self._fd)
        shutil.rmtree(self._dir, ignore_errors=True)
