"""Tasks written by someone else: Harbor-layout dirs and Terminal-Bench 1 imports.

Run: pytest tests/tasks/test_foreign_tasks.py
"""

import textwrap

import pytest

from rsi_lite.sandbox import SandboxError, make_sandbox
from rsi_lite.tasks import TaskError, load_task
from rsi_lite.tasks.task import parse_dockerfile
from rsi_lite.tasks.tb1_import import import_tb1
from rsi_lite.verify.check import check_task

from ..conftest import write_harbor_task

TEST_PY = """
import os
from pathlib import Path

def test_greeting():
    assert Path("/app/out.txt").read_text().strip() == os.environ.get("GREETING", "?") + " " + Path("/app/data/name.txt").read_text().strip()

def test_data_kept():
    assert Path("/app/data/name.txt").is_file()
"""


def test_dockerfile_parsing(tmp_path):
    env = tmp_path / "environment"
    (env / "src").mkdir(parents=True)
    (env / "src" / "a.txt").write_text("a")
    (env / "b.txt").write_text("b")
    (env / "Dockerfile").write_text(textwrap.dedent("""\
        # comment
        FROM python:3.13-slim
        WORKDIR /app
        ENV A=1 B="two words"
        ENV C 3
        COPY src/ /app/src/
        COPY b.txt ./
        RUN apt-get update && \\
            apt-get install -y curl
        RUN pip install numpy
        CMD ["bash"]
        """))
    spec = parse_dockerfile(env / "Dockerfile")
    assert spec.base_image == "python:3.13-slim" and spec.workdir == "/app"
    assert spec.env == {"A": "1", "B": "two words", "C": "3"}
    assert [(p.name, d) for p, d in spec.copies] == [("src", "/app/src"), ("b.txt", "/app/b.txt")]
    assert spec.apt_packages == [(8, ["curl"])]  # met by the host's packages outside Docker, if it has them
    assert len(spec.unsupported) == 1 and spec.unsupported[0][0] == 10 and spec.unsupported[0][1].startswith("RUN pip")


def test_copy_outside_the_context_is_refused(tmp_path):
    env = tmp_path / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text("FROM x\nCOPY ../secret /app/\n")
    with pytest.raises(TaskError, match="outside the build context"):
        parse_dockerfile(env / "Dockerfile")


def test_bad_task_toml_names_file_and_field(tmp_path):
    root = write_harbor_task(tmp_path / "t", dockerfile="FROM x\n", files={}, test_py="def test_x(): pass\n", solve="true")
    (root / "task.toml").write_text("[verifier]\ntimeout_sec = -5\n")
    with pytest.raises(TaskError, match=r"task.toml: verifier.timeout_sec"):
        load_task(root)
    (root / "task.toml").write_text("[metadata\n")
    with pytest.raises(TaskError, match="task.toml: invalid TOML"):
        load_task(root)
    (root / "task.toml").write_text("[environment]\ndocker_image = 3\n")
    with pytest.raises(TaskError, match=r"task.toml: environment.docker_image must be an image name"):
        load_task(root)


def test_docker_image_is_read_from_task_toml(tmp_path):
    root = write_harbor_task(tmp_path / "t", dockerfile="FROM x\nRUN false\n", files={}, test_py="def test_x(): pass\n",
                             solve="true")
    assert load_task(root).environment.docker_image is None
    (root / "task.toml").write_text('[environment]\ndocker_image = "ghcr.io/org/img:1"\n')
    assert load_task(root).environment.docker_image == "ghcr.io/org/img:1"


def test_a_harbor_task_from_elsewhere_runs_unchanged_under_bubblewrap(tmp_path, bwrap_ok):
    root = write_harbor_task(
        tmp_path / "greet", instruction="Write GREETING followed by the name in data/name.txt to /app/out.txt.",
        dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nENV GREETING=hello\nCOPY data /app/data\n",
        files={"data/name.txt": "ada\n"}, test_py=TEST_PY, solve='echo "$GREETING $(cat /app/data/name.txt)" > /app/out.txt')
    result = check_task(load_task(root), backend="bwrap")
    assert result.ok, result.reason
    assert result.solution.passed == 2 and result.noop.passed == 1


def test_a_task_with_run_steps_gets_an_error_naming_docker(tmp_path, bwrap_ok):
    root = write_harbor_task(tmp_path / "needs-run", dockerfile="FROM ubuntu\nRUN pip install numpy\nWORKDIR /app\n",
                             files={}, test_py="def test_x(): pass\n", solve="true")
    with pytest.raises(SandboxError, match="Docker backend"):
        make_sandbox(load_task(root), backend="bwrap").start()


def _tb1_task(root):
    (root / "tests").mkdir(parents=True)
    (root / "task.yaml").write_text(textwrap.dedent("""\
        instruction: |
          Create /app/answer.txt containing the sum of the numbers in /app/numbers.txt.
        author_name: someone
        difficulty: easy
        category: arithmetic
        tags: [files, math]
        max_agent_timeout_sec: 120
        max_test_timeout_sec: 30
        """))
    (root / "Dockerfile").write_text("FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\nWORKDIR /app\nCOPY numbers.txt /app/\n")
    (root / "numbers.txt").write_text("3\n4\n5\n")
    (root / "docker-compose.yaml").write_text("services: {}\n")
    (root / "run-tests.sh").write_text(
        "#!/bin/bash\napt-get update\napt-get install -y curl\ncurl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh\n"
        "source $HOME/.local/bin/env\nuv venv .tbench-testing\nuv pip install pytest==8.4.1\nuv run pytest $TEST_DIR/test_outputs.py -rA\n")
    (root / "tests" / "test_outputs.py").write_text(
        "import os\nfrom pathlib import Path\n\ndef test_answer():\n    assert Path('/app/answer.txt').read_text().strip() == '12'\n\n"
        "def test_test_dir_is_set():\n    assert os.environ['TEST_DIR'] == '/tests'\n")
    (root / "solution.sh").write_text("#!/bin/bash\npaste -sd+ /app/numbers.txt | bc > /app/answer.txt || python3 -c \"print(sum(map(int, open('/app/numbers.txt'))))\" > /app/answer.txt\n")
    return root


def test_tb1_import_maps_every_field(tmp_path):
    dest, warnings = import_tb1(_tb1_task(tmp_path / "tb1"), tmp_path / "harbor")
    assert warnings == []
    t = load_task(dest)
    assert t.instruction.startswith("Create /app/answer.txt")
    assert t.agent_timeout_sec == 120 and t.verifier_timeout_sec == 30
    assert t.metadata["family"] == "arithmetic" and t.metadata["tags"] == ["files", "math"]
    assert t.metadata["author_name"] == "someone" and t.difficulty == "easy"
    assert (dest / "environment" / "numbers.txt").is_file() and not (dest / "environment" / "docker-compose.yaml").exists()
    assert (dest / "tests" / "run-tests.orig.sh").is_file()


def test_tb1_import_passes_the_task_check(tmp_path, bwrap_ok):
    dest, _ = import_tb1(_tb1_task(tmp_path / "tb1"), tmp_path / "harbor")
    result = check_task(load_task(dest), backend="bwrap")
    assert result.ok, result.reason


def test_tb1_import_reports_what_it_dropped_and_refuses_bad_input(tmp_path):
    src = _tb1_task(tmp_path / "tb1")
    (src / "run-tests.sh").write_text("#!/bin/bash\nservice postgresql start\npytest $TEST_DIR -rA\n")
    _, warnings = import_tb1(src, tmp_path / "h1")
    assert warnings and "service postgresql start" in warnings[0]
    (src / "task.yaml").write_text("difficulty: easy\n")
    with pytest.raises(TaskError, match="task.yaml: field 'instruction'"):
        import_tb1(src, tmp_path / "h2")
    assert not (tmp_path / "h2").exists()


# ---- defects found on published Harbor tasks (issue 30): each one's regression test

def test_a_multi_stage_copy_is_an_image_feature_not_a_load_error(tmp_path):
    root = write_harbor_task(tmp_path / "uv", dockerfile="FROM python:3.12\nCOPY --from=ghcr.io/astral-sh/uv /uv /bin/uv\n"
                             "WORKDIR /app\n", files={}, test_py="def test_x(): pass\n", solve="true")
    task = load_task(root)
    assert [no for no, _ in task.environment.unsupported] == [2]  # needs the Docker backend, like RUN


def test_without_docker_a_run_line_is_named_with_its_file_and_line(tmp_path, monkeypatch):
    from rsi_lite import sandbox

    root = write_harbor_task(tmp_path / "needs-run", dockerfile="FROM ubuntu\nWORKDIR /app\nRUN chmod +x /entrypoint.sh\n",
                             files={}, test_py="def test_x(): pass\n", solve="true")
    monkeypatch.setattr(sandbox, "docker_available", lambda: "no Docker engine answers (ConnectionError)")
    with pytest.raises(SandboxError) as e:
        make_sandbox(load_task(root))
    msg = str(e.value)
    assert "Dockerfile:3" in msg and "RUN chmod +x /entrypoint.sh" in msg and "bubblewrap" in msg
    assert "no Docker engine answers" in msg


def test_one_bad_task_does_not_stop_a_check_of_many(tmp_path, bwrap_ok, capsys):
    from rsi_lite.cli.main import main

    write_harbor_task(tmp_path / "suite" / "good", dockerfile="FROM ubuntu\nWORKDIR /app\n", files={},
                      test_py="from pathlib import Path\ndef test_x(): assert Path('/app/x').is_file()\n",
                      solve="touch /app/x")
    write_harbor_task(tmp_path / "suite" / "bad", dockerfile="FROM ubuntu\nWORKDIR /app\nCOPY missing.txt /app/\n",
                      files={}, test_py="def test_x(): pass\n", solve="true")
    assert main(["tasks", "check", str(tmp_path / "suite")]) == 1
    out = capsys.readouterr().out
    assert "ok   good" in out and "FAIL bad" in out and "missing.txt" in out and "Dockerfile:3" in out
    assert "1 passed, 1 failed" in out


def test_a_verifier_that_writes_only_reward_txt_passes_the_check(tmp_path, bwrap_ok):
    root = write_harbor_task(tmp_path / "reward-only", dockerfile="FROM ubuntu\nWORKDIR /app\n", files={},
                             test_py="", solve="echo 42 > /app/answer.txt")
    (root / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "if [ \"$(cat /app/answer.txt 2>/dev/null)\" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n")
    r = check_task(load_task(root), backend="bwrap")
    assert r.ok, r.reason
    assert r.solution.strict == 1 and r.noop.strict == 0 and not r.solution.valid
    assert any("reward file only" in n for n in r.notes)


def test_a_multi_step_task_is_refused_by_name_not_split(tmp_path):
    from rsi_lite.tasks import find_tasks

    root = tmp_path / "suite" / "two-steps"
    (root / "steps" / "one" / "tests").mkdir(parents=True)
    (root / "steps" / "one" / "instruction.md").write_text("Step one.\n")
    (root / "steps" / "one" / "tests" / "test.sh").write_text("true\n")
    (root / "task.toml").write_text('[[steps]]\nname = "one"\n')
    (root / "instruction.md").write_text("Two steps.\n")
    errors = []
    assert find_tasks(tmp_path / "suite", errors) == []  # the step is not a task of its own
    assert len(errors) == 1 and "multi-step task" in str(errors[0][1]) and "task.toml" in str(errors[0][1])
    with pytest.raises(TaskError, match="multi-step"):
        load_task(root)


def test_a_test_module_that_does_not_import_shows_the_verifiers_output(tmp_path, bwrap_ok):
    root = write_harbor_task(tmp_path / "broken-tests", dockerfile="FROM ubuntu\nWORKDIR /app\n", files={},
                             test_py="import module_that_is_not_there\n\ndef test_x(): pass\n", solve="true")
    r = check_task(load_task(root), backend="bwrap")
    assert not r.ok and "verifier output:" in r.reason and "module_that_is_not_there" in r.reason


HARBOR_PREAMBLE = """#!/bin/bash
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def test_the_standard_harbor_verifier_preamble_runs_offline(tmp_path, bwrap_ok):
    """apt-get, the uv installer and uvx resolve to the kit's shims: the task's test.sh runs unchanged."""
    root = write_harbor_task(tmp_path / "uvx-task", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n", files={},
                             test_py="from pathlib import Path\ndef test_x(): assert Path('/app/x').read_text() == 'y'\n",
                             solve="printf y > /app/x")
    (root / "tests" / "test.sh").write_text(HARBOR_PREAMBLE)
    r = check_task(load_task(root), backend="bwrap")
    assert r.ok, r.reason
    assert r.solution.valid and r.solution.passed == r.solution.total == 1 and r.noop.strict == 0
    assert "rsi-lite offline shim" in r.solution.output_tail


def test_an_install_the_kit_does_not_have_is_refused_with_one_clear_line(tmp_path, bwrap_ok):
    root = write_harbor_task(tmp_path / "needs-pkg", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n", files={},
                             test_py="def test_x(): pass\n", solve="true")
    (root / "tests" / "test.sh").write_text(HARBOR_PREAMBLE.replace("-w pytest==8.4.1", "-w no-such-package-xyz==1.0"))
    r = check_task(load_task(root), backend="bwrap")
    assert not r.ok
    assert "not installed offline: no-such-package-xyz" in r.reason  # the verifier's own line, in the check's output


def test_what_a_sandbox_ignores_is_said_once(tmp_path, bwrap_ok, capsys):
    from rsi_lite.cli.main import main

    root = write_harbor_task(tmp_path / "s" / "web", dockerfile="FROM python:3.13-slim\nWORKDIR /app\n", files={},
                             test_py="from pathlib import Path\ndef test_x(): assert Path('/app/x').is_file()\n",
                             solve="touch /app/x")
    (root / "task.toml").write_text('[environment]\nallow_internet = true\n')
    (root / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    assert main(["tasks", "check", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "verifier: a fresh bwrap sandbox" in out and "python:3.13-slim (1)" in out
    assert "allow_internet = true" in out and "docker-compose.yaml: companion services are not started" in out


def test_a_run_line_that_only_installs_packages_the_host_has_is_met_outside_docker(tmp_path, bwrap_ok):
    from rsi_lite.tasks.task import apt_only

    assert apt_only("apt-get update && apt-get install -y curl python3 && rm -rf /var/lib/apt/lists/*") == ["curl", "python3"]
    assert apt_only("apt-get install -y jq && rm -rf /app") is None  # anything else changes the image
    root = write_harbor_task(tmp_path / "apt", dockerfile="FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y "
                             "bash && rm -rf /var/lib/apt/lists/*\nWORKDIR /app\n", files={},
                             test_py="from pathlib import Path\ndef test_x(): assert Path('/app/x').is_file()\n",
                             solve="touch /app/x")
    assert check_task(load_task(root), backend="bwrap").ok
    (root / "environment" / "Dockerfile").write_text("FROM ubuntu\nWORKDIR /app\nRUN apt-get install -y no-such-pkg-xyz\n")
    with pytest.raises(SandboxError, match="line 3 installs no-such-pkg-xyz"):
        make_sandbox(load_task(root), backend="bwrap").start()


def test_harbors_shared_verifier_mode_sees_what_the_agent_left_running(tmp_path, bwrap_ok):
    """A background job the solution started finishes its work while the tests wait: only Harbor's shared mode
    (tests in the agent's sandbox) sees it; the default fresh mode verifies a copy taken when the agent stopped."""
    root = write_harbor_task(tmp_path / "late", dockerfile="FROM ubuntu\nWORKDIR /app\n", files={},
                             test_py="import time\nfrom pathlib import Path\n\ndef test_late():\n    time.sleep(3)\n"
                                     "    assert Path('/app/late.txt').is_file()\n",
                             solve="(sleep 1; echo late > /app/late.txt) > /dev/null 2>&1 &")
    task = load_task(root)
    shared = check_task(task, backend="bwrap", mode="shared")
    assert shared.ok, shared.reason
    fresh = check_task(task, backend="bwrap")
    assert not fresh.ok and fresh.solution.failed == 1
