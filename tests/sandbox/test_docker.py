"""The Docker backend against a real engine (no mocks).

Skips with the reason when no engine answers or the base image is missing. To run these
on a Debian machine as root:

    apt-get install -y docker.io debootstrap && (dockerd > /tmp/dockerd.log 2>&1 &)
    rsi-lite sandbox base-image
    pytest tests/sandbox/test_docker.py

(`.ci/run` does exactly this.)  Run: pytest tests/sandbox/test_docker.py
"""

import os

import pytest

from rsi_lite.sandbox import SandboxLimits, docker_available, make_sandbox
from rsi_lite.tasks import load_task
from rsi_lite.verify.check import check_task
from rsi_lite.verify.verifier import verify_sandbox

from ..conftest import TASKS

BASE = "rsi-lite/base:bookworm"


@pytest.fixture(scope="module")
def engine():
    why = docker_available()
    if why:
        pytest.skip(why)
    import docker

    try:
        docker.from_env().images.get(BASE)
    except docker.errors.ImageNotFound:
        pytest.skip(f"base image {BASE} missing: run `rsi-lite sandbox base-image`")
    return True


def _first(suite):
    return load_task(TASKS / suite / sorted(os.listdir(TASKS / suite))[0])


@pytest.mark.parametrize("suite", ["core", "swr", "multi"])
def test_generated_tasks_check_under_docker(engine, suite):
    result = check_task(_first(suite), backend="docker")
    assert result.ok, result.reason


def test_docker_shell_state_timeout_and_restart(engine):
    with make_sandbox(_first("core"), backend="docker", limits=SandboxLimits(command_timeout=5, grace=1)) as s:
        s.exec("cd /tmp && export X=1")
        assert s.exec("pwd; echo $X").output.split() == ["/tmp", "1"]
        r = s.exec("sleep 30", timeout=1)
        assert r.timed_out
        r = s.exec("trap '' INT; sleep 30", timeout=1)
        assert r.timed_out and r.shell_restarted
        assert s.exec("echo alive").output.strip() == "alive"


def test_docker_network_is_off_and_fork_bomb_contained(engine):
    with make_sandbox(_first("core"), backend="docker", limits=SandboxLimits(command_timeout=5, grace=1)) as s:
        r = s.exec("python3 -c \"import socket; s=socket.socket(); s.settimeout(2); s.connect(('1.1.1.1', 80))\"")
        assert r.exit_code != 0
        s.exec("f(){ f|f& }; f; sleep 1", timeout=3)
        # the shell still answers; the bomb's last processes may still print "fork: retry" around its answer (they
        # did after it on a loaded machine, 2026-12-07), so the answer is looked for among the lines, not at the end
        r = s.exec("echo alive", timeout=10)
        assert r.exit_code == 0 and "alive" in r.output.splitlines(), r.output[-300:]


def test_docker_fake_reward_does_not_pass(engine):
    task = _first("core")
    with make_sandbox(task, backend="docker") as s:
        s.exec("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt")
        report = verify_sandbox(s, task)
    assert report.strict == 0 and report.valid


def test_docker_verifier_writes_the_old_ctrf_shape(engine):
    # the base image carries pytest-json-ctrf 0.3.5, as Harbor pins it: the parser must read it
    task = _first("core")
    with make_sandbox(task, backend="docker") as s:
        s.upload(task.solution_dir, "/tmp/solution")
        s.exec("bash /tmp/solution/solve.sh")
        report = verify_sandbox(s, task)
    assert report.strict == 1 and report.passed == report.total > 0


def test_docker_image_in_task_toml_is_run_instead_of_the_dockerfile(engine, tmp_path):
    from ..conftest import write_harbor_task

    # a Dockerfile that cannot build: the image named in task.toml is used as it is (Harbor's meaning)
    root = write_harbor_task(tmp_path / "t", dockerfile="FROM rsi-lite/base:bookworm\nRUN false\n", files={},
                             test_py="from pathlib import Path\ndef test_x(): assert Path('/app/x').is_file()\n",
                             solve="mkdir -p /app && touch /app/x")
    (root / "task.toml").write_text(f'[environment]\ndocker_image = "{BASE}"\n')
    result = check_task(load_task(root), backend="docker")
    assert result.ok, result.reason


def test_a_docker_image_that_is_nowhere_is_named_in_the_error(engine, tmp_path):
    from rsi_lite.sandbox import SandboxError

    from ..conftest import write_harbor_task

    root = write_harbor_task(tmp_path / "t", dockerfile="FROM rsi-lite/base:bookworm\n", files={},
                             test_py="def test_x(): pass\n", solve="true")
    (root / "task.toml").write_text('[environment]\ndocker_image = "rsi-lite/no-such-image:0"\n')
    with pytest.raises(SandboxError, match=r"task.toml environment.docker_image = 'rsi-lite/no-such-image:0': not on "
                                           r"this engine and pulling it failed"):
        with make_sandbox(load_task(root), backend="docker"):
            pass


def test_the_harbor_verifier_preamble_runs_offline_in_a_container(engine, tmp_path):
    """A container has no network either: apt-get, the uv installer and uvx resolve to the shims, which run
    the image's python3 with the kit's test runner copied in. With allow_internet the image's own tools run."""
    from ..conftest import write_harbor_task
    from ..tasks.test_foreign_tasks import HARBOR_PREAMBLE

    root = write_harbor_task(tmp_path / "uvx-task", dockerfile=f"FROM {BASE}\nWORKDIR /app\n", files={},
                             test_py="from pathlib import Path\ndef test_x(): assert Path('/app/x').read_text() == 'y'\n",
                             solve="printf y > /app/x")
    (root / "tests" / "test.sh").write_text(HARBOR_PREAMBLE)
    r = check_task(load_task(root), backend="docker")
    assert r.ok, r.reason
    assert r.solution.passed == r.solution.total == 1 and r.noop.strict == 0
    assert "rsi-lite offline shim" in r.solution.output_tail
