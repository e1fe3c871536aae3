"""Make the Docker base image locally: no registry is needed (or reachable) for it.

    debootstrap --variant=minbase --include=python3 bookworm ROOTFS MIRROR
    + pytest 8.4.1 and pytest-json-ctrf 0.3.5 (the versions Harbor's templates pin; pure
      Python wheels, installed from PyPI into /usr/local; Debian's pytest 7 is too old for
      the plugin)
    | docker import -> rsi-lite/base:bookworm

The generated tasks' Dockerfiles start `FROM rsi-lite/base:bookworm`. Needs root,
debootstrap (Debian package) and a Docker engine; takes a few minutes the first time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERIFIER_PACKAGES = ["pytest==8.4.1", "pytest-json-ctrf==0.3.5"]
PYTEST_SCRIPT = "#!/usr/bin/python3\nimport sys\nfrom pytest import console_main\nsys.exit(console_main())\n"


def _install_verifier_packages(root: Path) -> None:
    site = root / "usr/local/lib/python3.11/dist-packages"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-compile", "--only-binary=:all:",
                    "--python-version", "3.11", "--target", str(site), *VERIFIER_PACKAGES], check=True)
    shutil.rmtree(site / "bin", ignore_errors=True)
    script = root / "usr/local/bin/pytest"
    script.write_text(PYTEST_SCRIPT)
    script.chmod(0o755)


def build_base_image(tag: str = "rsi-lite/base:bookworm", suite: str = "bookworm",
                     mirror: str = "http://deb.debian.org/debian", rootfs: Path | None = None) -> str:
    import docker

    client = docker.from_env()
    try:
        client.images.get(tag)
        return f"{tag} already exists"
    except docker.errors.ImageNotFound:
        pass
    if not shutil.which("debootstrap"):
        raise RuntimeError("debootstrap is not installed (apt-get install debootstrap)")
    with tempfile.TemporaryDirectory(prefix="rsi-rootfs-") as tmp:
        root = Path(rootfs) if rootfs else Path(tmp) / "rootfs"
        if not (root / "usr/bin/python3").exists():
            subprocess.run(["debootstrap", "--variant=minbase", "--include=python3", suite, str(root), mirror],
                           check=True, stdout=subprocess.DEVNULL)
        _install_verifier_packages(root)
        (root / "app").mkdir(exist_ok=True)
        archive = Path(tmp) / "rootfs.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(root, arcname=".")
        repo, _, version = tag.partition(":")
        client.api.import_image_from_file(str(archive), repository=repo, tag=version or "latest")
    return f"built {tag}"
