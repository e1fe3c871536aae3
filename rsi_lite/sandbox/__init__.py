"""Sandboxes: one interface (`Sandbox`), three backends.

    bwrap   bubblewrap namespaces, the default on Linux (no daemon, millisecond start)
    docker  the Docker engine, for Dockerfiles with RUN steps and Harbor parity
    local   no isolation at all; only when asked for by name, with a warning
"""

from __future__ import annotations

from ..tasks.task import EnvironmentSpec, Task
from .base import CommandResult, Sandbox, SandboxError, SandboxLimits, workspace_state
from .bwrap import BubblewrapSandbox, bwrap_available
from .docker import DockerSandbox, docker_available
from .local import LocalSandbox

BACKENDS = {"bwrap": BubblewrapSandbox, "docker": DockerSandbox, "local": LocalSandbox}


def resolve_backend(backend: str = "auto", environment: EnvironmentSpec | None = None) -> str:
    """'auto' picks bwrap when it works here, else Docker when an engine answers; never local."""
    if backend != "auto":
        if backend not in BACKENDS:
            raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(BACKENDS)} or auto")
        return backend
    needs_image = bool(environment and environment.unsupported)
    if not needs_image and bwrap_available() is None:
        return "bwrap"
    if docker_available() is None:
        return "docker"
    if needs_image:
        no, line = environment.unsupported[0]
        where = f"{environment.context / 'Dockerfile'}:{no}" if environment.context else f"Dockerfile line {no}"
        raise SandboxError(f"{where} ({line[:80]}) changes the image, which the bubblewrap backend cannot replay, "
                           f"and the Docker backend cannot run here: {docker_available()}")
    raise SandboxError(f"no sandbox backend works here: {bwrap_available()}; {docker_available()}. The local "
                       f"backend (no isolation) runs only when asked for by name: --backend local")


def make_sandbox(task_or_env: Task | EnvironmentSpec | None = None, *, backend: str = "auto",
                 limits: SandboxLimits | None = None, verifier: bool = False) -> Sandbox:
    """A sandbox for a task (its Dockerfile's files copied in at start) or for a bare environment."""
    env = task_or_env.environment if isinstance(task_or_env, Task) else task_or_env
    cls = BACKENDS[resolve_backend(backend, env)]
    return cls(env, limits, verifier=verifier)


__all__ = ["BACKENDS", "CommandResult", "Sandbox", "SandboxError", "SandboxLimits", "make_sandbox", "workspace_state",
           "resolve_backend", "bwrap_available", "docker_available"]
