"""The persistent shell and the bubblewrap sandbox, including the adversarial set.

Run: pytest tests/sandbox/test_sandbox.py
"""

import os
import time
from pathlib import Path

import pytest

from rsi_lite.sandbox import SandboxLimits, make_sandbox
from rsi_lite.sandbox.base import OutputCap
from rsi_lite.tasks import load_task
from rsi_lite.verify.verifier import verify_sandbox

from ..conftest import TASKS

FAST = SandboxLimits(command_timeout=5, grace=1.0)


@pytest.fixture
def sb(bwrap_ok):
    with make_sandbox(None, backend="bwrap", limits=FAST) as s:
        yield s


def test_output_cap_keeps_head_and_tail():
    cap = OutputCap(10)
    cap.add(b"0123456789abcdefghij")
    assert cap.head == b"01234" and cap.tail == b"fghij" and cap.dropped == 10
    assert "10 bytes of output omitted" in cap.text()


def test_state_persists_between_commands(sb):
    assert sb.exec("cd /tmp && export GREETING=hi").exit_code == 0
    r = sb.exec('pwd; echo "$GREETING"')
    assert r.output.split() == ["/tmp", "hi"]


def test_exit_codes_and_syntax_errors_stay_in_the_command(sb):
    assert sb.exec("false").exit_code == 1
    r = sb.exec("echo 'unterminated")
    assert r.exit_code == 2 and "unexpected EOF" in r.output
    assert sb.exec("echo fine").output == "fine\n"


def test_heredocs_and_multiline_commands(sb):
    r = sb.exec("cat > a.txt <<'EOF'\nline one\n$NOT_EXPANDED\nEOF\ncat a.txt")
    assert r.output == "line one\n$NOT_EXPANDED\n"


def test_a_command_waiting_for_input_gets_eof_not_a_hang(sb):
    r = sb.exec("cat; read x; echo done", timeout=3)
    assert not r.timed_out and r.output.strip() == "done"


def test_exit_restarts_the_shell_and_keeps_the_workspace(sb):
    sb.exec("echo kept > f.txt; cd /tmp")
    r = sb.exec("exit 3")
    assert r.exit_code == 3 and r.shell_restarted
    r = sb.exec("pwd; cat /app/f.txt")
    assert r.output.split() == ["/app", "kept"]


def test_sleep_past_the_timeout_is_interrupted(sb):
    t0 = time.monotonic()
    r = sb.exec("sleep 60", timeout=1)
    assert r.timed_out and time.monotonic() - t0 < 5
    assert "timed out" in r.for_model()
    assert sb.exec("echo alive").output == "alive\n"


def test_a_process_ignoring_ctrl_c_is_killed_and_the_shell_comes_back(sb):
    sb.exec("cd /tmp")
    r = sb.exec("trap '' INT; sleep 60", timeout=1)
    assert r.timed_out and r.shell_restarted
    assert sb.exec("echo alive; pwd").output.split() == ["alive", "/app"]


def test_endless_output_is_capped_and_stopped(sb):
    r = sb.exec("yes", timeout=1)
    assert r.timed_out and r.truncated_bytes > 0
    assert len(r.output) < 2 * sb.limits.output_bytes
    assert r.output.startswith("y\ny\n")
    assert sb.exec("echo after").output == "after\n"


def test_fork_bomb_is_contained(sb):
    before = len(os.listdir("/proc"))
    r = sb.exec("f(){ f|f& }; f; sleep 2; echo survived", timeout=4)
    assert r.exit_code is not None or r.timed_out
    # the sandbox stays usable, and the host's process table is not flooded
    assert len([p for p in os.listdir("/proc") if p.isdigit()]) < before + 2 * sb.limits.max_processes
    sb.close()
    time.sleep(0.5)
    assert len(os.listdir("/proc")) < before + 20


def test_filling_the_disk_stops_at_the_workspace_size(sb):
    r = sb.exec("for i in $(seq 1 100); do head -c 50M /dev/zero > big$i || break; done; df -m /app | tail -1", timeout=30)
    used_mb = int(r.output.split()[-4])
    assert used_mb <= sb.limits.app_size_mb
    assert "File too large" in r.output or "No space left" in r.output
    assert sb.exec("rm -f big*; echo ok > small.txt; cat small.txt").output == "ok\n"


def test_no_network(sb):
    r = sb.exec("python3 -c \"import socket; s=socket.socket(); s.settimeout(2); s.connect(('1.1.1.1', 80))\"")
    assert r.exit_code != 0 and ("unreachable" in r.output or "Errno" in r.output)
    assert "lo" in sb.exec("ls /sys/class/net 2>/dev/null || echo lo").output


def test_writing_outside_the_workspace_is_refused_and_host_untouched(sb, tmp_path):
    marker = Path("/etc/rsi-lite-should-not-exist")
    r = sb.exec(f"touch {marker}; touch /usr/x; touch /rootfile; echo > {tmp_path}/x; echo done")
    assert "Read-only file system" in r.output or "Permission denied" in r.output or "No such file" in r.output
    assert not marker.exists() and not Path("/usr/x").exists() and not Path("/rootfile").exists()
    assert not (tmp_path / "x").exists()


def test_tests_are_not_there_during_the_agent_phase(bwrap_ok):
    task = load_task(TASKS / "core" / sorted(os.listdir(TASKS / "core"))[0])
    with make_sandbox(task, backend="bwrap", limits=FAST) as s:
        r = s.exec("ls /tests; find / -name 'test_outputs.py' 2>/dev/null | grep -v /usr/ ; echo end")
        assert "No such file" in r.output and "test_outputs.py" not in r.output.replace("No such", "")


def test_faking_the_verifier_files_does_not_pass(bwrap_ok):
    task = load_task(TASKS / "core" / sorted(os.listdir(TASKS / "core"))[0])
    fake_ctrf = ('{"results": {"tool": {"name": "pytest"}, "summary": {"tests": 1, "passed": 1, "failed": 0}, '
                 '"tests": [{"name": "x", "status": "passed"}]}}')
    with make_sandbox(task, backend="bwrap", limits=FAST) as s:
        s.exec(f"mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; echo '{fake_ctrf}' > /logs/verifier/ctrf.json; "
               f"cp /logs/verifier/* /app/; "
               # a background writer that keeps planting a reward: the verifier runs elsewhere
               f"(while true; do echo 1 > /logs/verifier/reward.txt; sleep 0.05; done) &")
        report = verify_sandbox(s, task)
    assert report.strict == 0 and report.valid and report.total > 1


def test_a_planted_conftest_cannot_pass_the_tests(bwrap_ok):
    task = load_task(TASKS / "core" / sorted(os.listdir(TASKS / "core"))[0])
    hack = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    out = yield\n    out.get_result().outcome = 'passed'\n")
    with make_sandbox(task, backend="bwrap", limits=FAST) as s:
        s.exec(f"cat > conftest.py <<'EOF'\n{hack}EOF\nprintf '[pytest]\\naddopts = -p no:ctrf\\n' > pytest.ini")
        report = verify_sandbox(s, task)
    assert report.strict == 0 and report.valid


def test_local_backend_runs_only_by_name_and_warns(tmp_path):
    with pytest.warns(UserWarning, match="no isolation"):
        with make_sandbox(None, backend="local", limits=FAST) as s:
            r = s.exec('echo hi > x.txt; cat x.txt; test "$PWD" = "$APP_DIR" && echo in-workspace')
    assert r.output.split() == ["hi", "in-workspace"]


def test_limits_survive_a_shell_restart(sb):
    before = sb.exec("ulimit -u; ulimit -f").output.split()
    sb.exec("exit 0")
    assert sb.exec("ulimit -u; ulimit -f").output.split() == before == [
        str(sb.limits.max_processes), str(sb.limits.file_size_mb * 1024)]


def test_local_backend_checks_a_generated_task():
    from rsi_lite.verify.check import check_task

    with pytest.warns(UserWarning):
        result = check_task(load_task(TASKS / "core" / sorted(os.listdir(TASKS / "core"))[0]), backend="local")
    assert result.ok, result.reason


def test_after_every_attack_the_verdict_is_still_honest(bwrap_ok):
    """Fork bomb, endless output, a full disk and a sleeper in one episode: the verifier still runs and says fail."""
    from rsi_lite.verify.verifier import verify_sandbox as verify

    task = load_task(TASKS / "core" / sorted(os.listdir(TASKS / "core"))[0])
    with make_sandbox(task, backend="bwrap", limits=FAST) as s:
        s.exec("f(){ f|f& }; f", timeout=2)
        s.exec("yes", timeout=1)
        s.exec("head -c 300M /dev/zero > /app/fill; sleep 100 &", timeout=5)
        report = verify(s, task)
    assert report.valid and report.strict == 0 and report.total > 0


def test_a_fork_bomb_in_one_sandbox_does_not_starve_another(bwrap_ok):
    with make_sandbox(None, backend="bwrap", limits=FAST) as bomb, make_sandbox(None, backend="bwrap", limits=FAST) as other:
        bomb.exec("f(){ f|f& }; f", timeout=2)
        time.sleep(1)
        r = other.exec("ls /; python3 -c 'print(6 * 7)'")
        assert r.exit_code == 0 and "42" in r.output


def test_the_keeper_ends_once_nobody_reads_it():
    """An orphaned keeper spun under PID 1 in a CI run (docs/experiments.md, 2026-12-07): its owner gone, its pty
    closed, each `bash -i` it restarted read end-of-file at once, and the restart notice failed to write without
    killing it (the pty answers EIO, not SIGPIPE). The same here with pipes and SIGPIPE ignored: stdin at
    end-of-file, stdout with no reader. The keeper must end instead of restarting shells without end."""
    import subprocess

    from rsi_lite.sandbox.base import keeper_command

    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    os.close(w_in)   # end-of-file for every shell it starts
    os.close(r_out)  # nobody reads what it writes; Python ignores SIGPIPE and the child keeps that (restore_signals)
    p = subprocess.Popen(keeper_command(SandboxLimits(), limit_processes=False), stdin=r_in, stdout=w_out,
                         stderr=subprocess.DEVNULL, restore_signals=False, env={**os.environ, "RSI_WORKDIR": "/tmp"})
    os.close(r_in)
    os.close(w_out)
    try:
        assert p.wait(timeout=10) is not None
    finally:
        if p.poll() is None:
            p.kill()
