"""A task on disk in Harbor layout, and the parts of its Dockerfile that a sandbox can honour.

`load_task(path)` checks the layout and names the file and field that is wrong, so a
broken task fails at load time rather than halfway through a rollout.
"""

from __future__ import annotations

import posixpath
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class TaskError(ValueError):
    """A task directory that does not follow the Harbor layout; the message names the file and field."""


@dataclass
class EnvironmentSpec:
    """What `environment/Dockerfile` asks for, in terms every backend understands."""

    base_image: str | None = None
    workdir: str = "/app"
    env: dict[str, str] = field(default_factory=dict)
    copies: list[tuple[Path, str]] = field(default_factory=list)
    """(host source inside environment/, destination path in the sandbox)"""
    unsupported: list[tuple[int, str]] = field(default_factory=list)
    """(line number, instruction) the non-Docker backends cannot replay, e.g. RUN."""
    apt_packages: list[tuple[int, list[str]]] = field(default_factory=list)
    """(line number, packages) of RUN lines that only install system packages (apt-get update/install, cleaning
    the lists): outside Docker they are met when the host has every package (`missing_packages`)."""
    context: Path | None = None
    """The Docker build context (environment/), for the backend that builds images."""
    allow_internet: bool = False
    docker_image: str | None = None
    """task.toml `environment.docker_image`: a prebuilt image the Docker backend runs instead of building
    environment/Dockerfile (Harbor's meaning); the other backends ignore it (`ignored_features`)."""


@dataclass
class Task:
    path: Path
    name: str
    instruction: str
    config: dict
    environment: EnvironmentSpec

    @property
    def metadata(self) -> dict:
        return self.config.get("metadata", {})

    @property
    def family(self) -> str:
        return str(self.metadata.get("family") or self.metadata.get("category") or "unknown")

    @property
    def difficulty(self) -> str:
        return str(self.metadata.get("difficulty", "unknown"))

    @property
    def suite(self) -> str:
        return str(self.metadata.get("suite", ""))

    @property
    def tests_dir(self) -> Path:
        return self.path / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.path / "solution"

    @property
    def environment_dir(self) -> Path:
        return self.path / "environment"

    @property
    def agent_timeout_sec(self) -> float:
        return float(self.config.get("agent", {}).get("timeout_sec", 600))

    @property
    def verifier_timeout_sec(self) -> float:
        return float(self.config.get("verifier", {}).get("timeout_sec", 600))

    @property
    def allow_internet(self) -> bool:
        return bool(self.config.get("environment", {}).get("allow_internet", False))


def _logical_lines(text: str):
    """Dockerfile lines with backslash continuations joined and comments dropped: (first line no, text)."""
    buf, start = "", 0
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if not buf:
            start = no
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        yield start, buf + line
        buf = ""
    if buf:
        yield start, buf


def apt_only(run: str) -> list[str] | None:
    """The packages of a RUN line that does nothing but install system packages, else None.

    >>> apt_only("apt-get update && apt-get install -y curl python3 && rm -rf /var/lib/apt/lists/*")
    ['curl', 'python3']
    >>> apt_only("pip install numpy") is None
    True
    """
    pkgs = []
    for part in (p.strip() for p in run.replace(";", "&&").split("&&")):
        words = shlex.split(part) if part else []
        words = [w for w in words if not (w.startswith("-") or "=" in w and w.split("=")[0].isupper())]
        if not words:
            continue
        if words[0] in ("apt-get", "apt") and words[1:2] in (["update"], ["clean"]):
            continue
        if words[:2] in (["apt-get", "install"], ["apt", "install"]):
            pkgs += [w.split("=")[0] for w in words[2:]]
            continue
        if words[0] == "rm" and all(w.startswith(("/var/lib/apt", "/var/cache/apt")) for w in words[1:]):
            continue
        return None
    return pkgs or None


def missing_packages(spec: EnvironmentSpec) -> list[tuple[int, str]]:
    """(line, package) of `apt_packages` this host lacks (a package counts as present when dpkg knows it or a
    command of that name exists)."""
    import shutil
    import subprocess

    out = []
    for no, pkgs in spec.apt_packages:
        for p in pkgs:
            known = shutil.which("dpkg") and subprocess.run(["dpkg", "-s", p], capture_output=True).returncode == 0
            if not known and not shutil.which(p):
                out.append((no, p))
    return out


def parse_dockerfile(path: Path) -> EnvironmentSpec:
    context = path.parent
    spec = EnvironmentSpec(context=context)
    workdir = "/"
    for no, line in _logical_lines(path.read_text()):
        op, _, rest = line.partition(" ")
        op = op.upper()
        rest = rest.strip()
        if op == "FROM":
            spec.base_image = rest.split()[0]
        elif op == "WORKDIR":
            workdir = posixpath.normpath(rest if rest.startswith("/") else f"{workdir}/{rest}")
        elif op == "ENV":
            if "=" in rest.split()[0]:
                for item in shlex.split(rest):
                    k, _, v = item.partition("=")
                    spec.env[k] = v
            else:
                k, _, v = rest.partition(" ")
                spec.env[k] = v.strip()
        elif op in ("COPY", "ADD"):
            if any(a.startswith("--from") for a in shlex.split(rest)):  # a multi-stage or image copy: an image feature
                spec.unsupported.append((no, line))
                continue
            args = [a for a in shlex.split(rest) if not a.startswith("--")]
            if len(args) < 2 or (op == "ADD" and any("://" in a or a.endswith((".tar", ".tar.gz", ".tgz")) for a in args[:-1])):
                spec.unsupported.append((no, line))
                continue
            dest = args[-1]
            into_dir = dest.endswith("/") or dest in (".", "./") or len(args) > 2
            dest = posixpath.normpath(dest if dest.startswith("/") else f"{workdir}/{dest}")
            for src in args[:-1]:
                host = (context / src).resolve()
                if not host.is_relative_to(context.resolve()):
                    raise TaskError(f"{path}:{no}: COPY source {src!r} is outside the build context")
                if not host.exists():
                    raise TaskError(f"{path}:{no}: COPY source {src!r} does not exist")
                target = f"{dest.rstrip('/')}/{host.name}" if host.is_file() and into_dir else dest
                spec.copies.append((host, target))
        elif op in ("LABEL", "MAINTAINER", "ARG", "EXPOSE", "CMD", "ENTRYPOINT", "SHELL", "STOPSIGNAL", "HEALTHCHECK", "VOLUME"):
            continue  # metadata only: nothing a sandbox must replay
        elif op == "RUN" and (pkgs := apt_only(rest)) is not None:
            spec.apt_packages.append((no, pkgs))
        else:  # RUN, USER, ONBUILD: they change the image
            spec.unsupported.append((no, line))
    spec.workdir = workdir if workdir != "/" else "/app"
    return spec


def load_task(path: str | Path) -> Task:
    path = Path(path)
    if not path.is_dir():
        raise TaskError(f"{path}: not a task directory")
    if (path / "steps").is_dir():
        raise TaskError(f"{path / 'task.toml'}: a multi-step task (steps/*/ with [[steps]] in task.toml): steps that "
                        "share one sandbox and are verified in order are not supported; refused rather than run as "
                        "separate tasks without their shared environment and state")
    inst = path / "instruction.md"
    if not inst.is_file():
        raise TaskError(f"{inst}: missing (Harbor tasks keep the public instruction here)")
    toml_path = path / "task.toml"
    try:
        config = tomllib.loads(toml_path.read_text()) if toml_path.is_file() else {}
    except tomllib.TOMLDecodeError as e:
        raise TaskError(f"{toml_path}: invalid TOML: {e}") from e
    if "steps" in config:
        raise TaskError(f"{toml_path}: a multi-step task ([[steps]]): not supported (see above)")
    for section in ("metadata", "verifier", "agent", "environment"):
        if section in config and not isinstance(config[section], dict):
            raise TaskError(f"{toml_path}: [{section}] must be a table")
    for section in ("verifier", "agent"):
        t = config.get(section, {}).get("timeout_sec")
        if t is not None and (not isinstance(t, (int, float)) or t <= 0):
            raise TaskError(f"{toml_path}: {section}.timeout_sec must be a positive number, got {t!r}")
    test_sh = path / "tests" / "test.sh"
    if not test_sh.is_file():
        raise TaskError(f"{test_sh}: missing (the verifier entry point)")
    dockerfile = path / "environment" / "Dockerfile"
    env = parse_dockerfile(dockerfile) if dockerfile.is_file() else EnvironmentSpec()
    env.allow_internet = bool(config.get("environment", {}).get("allow_internet", False))
    image = config.get("environment", {}).get("docker_image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise TaskError(f"{toml_path}: environment.docker_image must be an image name, got {image!r}")
    env.docker_image = image or None
    return Task(path=path, name=path.name, instruction=inst.read_text(), config=config, environment=env)


def ignored_features(task: Task) -> list[str]:
    """What of the task's own configuration a non-Docker sandbox does not honour, one line each (to warn once)."""
    out = []
    if task.allow_internet:
        out.append("task.toml allow_internet = true: sandboxes have no network; what needs it will fail")
    compose = [p.name for p in (task.environment_dir.glob("docker-compose.y*ml") if task.environment_dir.is_dir() else [])]
    if compose:
        out.append(f"environment/{compose[0]}: companion services are not started")
    if task.environment.docker_image:
        out.append(f"task.toml docker_image = {task.environment.docker_image!r}: used by the Docker backend only")
    return out


def find_tasks(root: str | Path, errors: list | None = None) -> list[Task]:
    """Every task directory at or below `root` (a task dir itself, a suite dir, or tasks_mini/).

    A directory with `instruction.md` or `task.toml` is a task; the step directories of a multi-step task are
    part of it, not tasks of their own. With `errors` (a list), a directory that fails to load is appended to it
    as (path, TaskError) and the others still load; without, the first failure raises."""
    root = Path(root)
    if (root / "instruction.md").is_file() or (root / "task.toml").is_file():
        found = [root]
    else:
        found = sorted({p.parent for pat in ("instruction.md", "task.toml") for p in root.rglob(pat)
                        if not p.parent.name.startswith(".")})
    found = [d for d in found if not any(d.is_relative_to(o / "steps") for o in found if o != d)]
    tasks = []
    for d in found:
        try:
            tasks.append(load_task(d))
        except TaskError as e:
            if errors is None:
                raise
            errors.append((d, e))
    return tasks


def family_check_counts(tasks: list[Task]) -> dict[str, list[int]]:
    """Check counts per family (input to `rewards.family_divisors`, the D_f of FDR and SPR)."""
    out: dict[str, list[int]] = {}
    for t in tasks:
        n = t.metadata.get("checks")
        if n is None:
            n = sum(p.read_text().count("\ndef test_") for p in t.tests_dir.glob("test_*.py"))
        out.setdefault(t.family, []).append(int(n))
    return out
