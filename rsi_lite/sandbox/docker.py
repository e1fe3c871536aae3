"""The Docker backend: builds the task's `environment/Dockerfile` and runs the shell in a container.

For tasks whose Dockerfile needs `RUN` steps, and for parity with Harbor. Talks to the
engine through the `docker` SDK. The image is built as the task wrote it: the build may use
the network where there is one (a missing `FROM` image is pulled, `RUN` lines may install);
the container the agent and verifier get has none unless the task's `allow_internet` is set.
A task.toml `environment.docker_image` is run as it is (pulled if missing), the Dockerfile
unused. No registry is assumed: the generated tasks build `FROM rsi-lite/base:bookworm`,
which `rsi-lite sandbox base-image` makes locally (debootstrap + docker import).
"""

from __future__ import annotations

import hashlib
import io
import os
import secrets
import select
import socket
import tarfile
import time
from pathlib import Path

from .base import SHELL_ENV, OutputCap, Sandbox, SandboxError, keeper_command
from .files import CopyLimitExceeded

_IMAGES: dict[str, str] = {}


def docker_available() -> str | None:
    """None if a Docker engine answers, else why not."""
    try:
        import docker
    except ImportError:
        return "the docker Python SDK is not installed (pip install docker)"
    try:
        docker.from_env(timeout=5).ping()
    except Exception as e:  # the SDK raises several types for "no engine"
        return f"no Docker engine answers ({type(e).__name__}); start dockerd (see README: Docker backend)"
    return None


def _context_hash(context: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(context.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(context)).encode())
            h.update(p.read_bytes())
            h.update(oct(p.stat().st_mode).encode())
    return h.hexdigest()[:16]


def _tar_of(src: Path, arcname: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(src, arcname=arcname)
    return buf.getvalue()


def _build_hint(base: str | None, e: Exception) -> str:
    """What to do about a failed build, when the error says which."""
    if base and base.startswith("rsi-lite/"):
        return f"; base image {base} (make it with `rsi-lite sandbox base-image`)"
    if any(w in str(e).lower() for w in ("pull access denied", "not found", "dial tcp", "lookup ", "timeout")):
        return (f"; base image {base}: not on this engine and no registry answered (build it locally, or `docker "
                "load` it, then check again)")
    return f"; base image {base}" if base else ""


def _ensure_image(client, name: str, where: str) -> str:
    """`name` on the engine, pulled if it is not there yet; a clear error where no registry answers."""
    try:
        client.images.get(name)
    except Exception:
        try:
            client.images.pull(name)
        except Exception as e:
            raise SandboxError(f"{where} = {name!r}: not on this engine and pulling it failed ({type(e).__name__}: "
                               f"{e}); `docker load` it or build it locally first") from e
    return name


class DockerSandbox(Sandbox):
    backend = "docker"

    def _client(self):
        import docker

        return docker.from_env()

    def _image(self) -> str:
        env = self.environment
        if env.docker_image:  # Harbor: a prebuilt image named in task.toml instead of the Dockerfile
            return _ensure_image(self._client(), env.docker_image, "task.toml environment.docker_image")
        ctx = env.context
        if ctx is None:
            return env.base_image or "rsi-lite/base:bookworm"
        client = self._client()
        try:  # the tag follows the base image too, so a rebuilt base rebuilds the task images
            base_id = client.images.get(env.base_image).id if env.base_image else ""
        except Exception:
            base_id = ""
        key = hashlib.sha256((_context_hash(ctx) + base_id).encode()).hexdigest()[:16]
        if key not in _IMAGES:
            tag = f"rsi-lite-task:{key}"
            try:
                client.images.get(tag)
            except Exception:
                try:  # as the task wrote it: the build may use the network (a missing FROM image is pulled, RUN
                    # lines may install); the container the agent gets has none (`allow_internet`)
                    client.images.build(path=str(ctx), tag=tag, rm=True, pull=False)
                except Exception as e:
                    raise SandboxError(f"{ctx}/Dockerfile: docker build failed: {e}{_build_hint(env.base_image, e)}") from e
            _IMAGES[key] = tag
        return _IMAGES[key]

    def _launch(self) -> None:
        from docker.types import Ulimit

        lim = self.limits
        client = self._client()
        allow_net = self.environment.allow_internet
        self._container = client.containers.run(
            self._image(), ["sleep", "infinity"], detach=True, network_disabled=not allow_net,
            working_dir=self.environment.workdir, mem_limit=f"{lim.memory_mb}m", pids_limit=lim.max_processes,
            ulimits=[Ulimit(name="fsize", soft=lim.file_size_mb << 20, hard=lim.file_size_mb << 20)],
            # no tmpfs mounts: the engine cannot copy files into them (docker cp writes underneath)
            environment={**SHELL_ENV, "RSI_WORKDIR": self.environment.workdir, **self.environment.env},
            auto_remove=False,
        )
        self._container.exec_run(["mkdir", "-p", "/logs/verifier", "/run/rsi", self.environment.workdir])
        if self.verifier:
            self._container.exec_run(["mkdir", "-p", "/tests"])
        self._open_shell()

    def _initial_copies(self):
        return []  # the Dockerfile's COPY lines are already in the image

    def _open_shell(self) -> None:
        api = self._client().api
        ex = api.exec_create(self._container.id, keeper_command(self.limits), stdin=True, tty=True,
                             workdir=self.environment.workdir)
        self._sock = api.exec_start(ex["Id"], socket=True, tty=True)
        self._raw: socket.socket = getattr(self._sock, "_sock", self._sock)
        self._raw.setblocking(False)
        nonce = secrets.token_hex(8)
        self._write(f"stty -echo -onlcr; printf '\\036RSI{nonce}:%d\\036\\n' 0\n".encode())
        if self._collect(nonce, OutputCap(4096), time.monotonic() + 10)[2] != "done":
            raise SandboxError("docker sandbox: the shell did not answer")

    def _write(self, data: bytes) -> None:
        self._raw.setblocking(True)
        try:
            self._raw.sendall(data)
        finally:
            self._raw.setblocking(False)

    def _read(self, timeout: float) -> bytes | None:
        ready, _, _ = select.select([self._raw], [], [], timeout)
        if not ready:
            return b""
        try:
            data = self._raw.recv(65536)
        except BlockingIOError:
            return b""
        except OSError:
            return None
        return data or None

    def _put_file(self, dest: str, data: bytes, mode: int = 0o644) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(os.path.basename(dest))
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        self._container.put_archive(os.path.dirname(dest), buf.getvalue())

    def upload(self, src: Path, dest: str) -> None:
        src = Path(src)
        if src.is_dir():
            self._container.exec_run(["mkdir", "-p", dest])
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                for p in sorted(src.iterdir()):
                    tar.add(p, arcname=p.name)
            self._container.put_archive(dest, buf.getvalue())
        else:
            self._container.exec_run(["mkdir", "-p", os.path.dirname(dest)])
            self._container.put_archive(os.path.dirname(dest), _tar_of(src, os.path.basename(dest)))

    def _archive(self, path: str) -> tarfile.TarFile | None:
        try:
            stream, _ = self._container.get_archive(path)
        except Exception:
            return None
        data, budget = io.BytesIO(), (self.limits.app_size_mb << 20) * 2
        for chunk in stream:
            data.write(chunk)
            if data.tell() > budget:
                raise CopyLimitExceeded(f"{path}: larger than the copy budget")
        data.seek(0)
        return tarfile.open(fileobj=data)

    def download(self, src: str, dest: Path) -> None:
        tar = self._archive(src)
        if tar is None:
            raise FileNotFoundError(f"{src}: not in the container")
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        top = os.path.basename(src.rstrip("/"))
        for m in tar.getmembers():
            rel = m.name.split("/", 1)[1] if "/" in m.name else ("" if m.name == top else m.name)
            if not rel or rel.startswith("/") or ".." in rel.split("/"):
                continue
            out = dest / rel
            if m.isdir():
                out.mkdir(parents=True, exist_ok=True)
            elif m.issym():
                out.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(m.linkname, out)
            elif m.isfile():
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(tar.extractfile(m).read())
            else:
                continue
            if not m.issym():
                os.chmod(out, m.mode & 0o7777 | (0o700 if m.isdir() else 0))

    def read_file(self, path: str) -> bytes | None:
        tar = self._archive(path)
        if tar is None:
            return None
        members = tar.getmembers()
        if len(members) != 1 or not members[0].isfile():
            return None
        return tar.extractfile(members[0]).read()

    def _kill_all_but_keeper(self) -> None:
        # PID 1 is `sleep infinity`; `kill -9 -1` takes every other process, our shell included
        self._container.exec_run(["sh", "-c", "kill -9 -1"], user="root")
        try:
            self._sock.close()
        except Exception:
            pass
        self._open_shell()

    def _teardown(self) -> None:
        try:
            self._sock.close()
        except Exception:
            pass
        try:
            self._container.remove(force=True)
        except Exception:
            pass
