"""Run a task's protected tests on a finished workspace and read the verdict.

The Harbor contract, with one deliberate tightening: the tests run in a *fresh* sandbox
that holds a copy of the agent's workspace and nothing else the agent left running. So a
background process cannot rewrite `reward.txt` after the tests, and `/logs/verifier`
starts empty whatever the agent wrote there.

The verdict reads two files. `reward.txt` (or `reward.json`) is what Harbor itself reads;
the CTRF report gives P, the number of passed checks, and cross-checks the reward. Strict
success S needs both to agree: the reward says 1 *and* the report is valid, has at least
one test, and no failure. (Terminal-Bench 1 counted an empty test set as resolved; we do not.)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import shutil
import stat
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..sandbox import make_sandbox
from ..sandbox.base import Sandbox, SandboxLimits
from ..tasks.task import Task

STATUSES = ("passed", "failed", "skipped", "pending", "other")
NO_CTRF = "no CTRF report"
"""How a report without a CTRF file begins its reason (the verifier wrote only a reward file, or nothing)."""


@dataclass
class VerifierReport:
    """The verdict on one workspace. `strict` is S; `passed` is P; `total` counts every test."""

    strict: int
    passed: int
    failed: int
    total: int
    valid: bool
    """False when the CTRF report is missing, unreadable or inconsistent (shaped rewards then fall back to S)."""
    skipped: int = 0
    reward_file: float | None = None
    """What reward.txt / reward.json said, as Harbor would read it."""
    reason: str = ""
    tests: list[dict] = field(default_factory=list)
    duration: float = 0.0
    timed_out: bool = False
    output_tail: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "VerifierReport":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


class CTRFError(ValueError):
    pass


def parse_ctrf(data: bytes | str) -> tuple[list[dict], dict]:
    """(tests, summary) from a CTRF report, in either shape seen in the wild.

    pytest-json-ctrf 0.3.x writes `{"results": ...}` with float seconds and snake_case keys;
    0.6.x adds `reportFormat: "CTRF"` and writes integer milliseconds and camelCase. Both keep
    `results.tests[].name/status` and `results.summary.{tests, passed, failed, ...}`, which is
    all we read. Raises CTRFError with the field that is wrong.
    """
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CTRFError(f"not JSON: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise CTRFError("missing field 'results'")
    if "reportFormat" in doc and doc["reportFormat"] != "CTRF":
        raise CTRFError(f"reportFormat is {doc['reportFormat']!r}, not 'CTRF'")
    results = doc["results"]
    tests, summary = results.get("tests"), results.get("summary")
    if not isinstance(tests, list):
        raise CTRFError("missing field 'results.tests'")
    if not isinstance(summary, dict):
        raise CTRFError("missing field 'results.summary'")
    out = []
    for i, t in enumerate(tests):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise CTRFError(f"results.tests[{i}] has no name")
        if t.get("status") not in STATUSES:
            raise CTRFError(f"results.tests[{i}].status is {t.get('status')!r}")
        out.append({"name": t["name"], "status": t["status"], "message": str(t.get("message", ""))[:500]})
    counted = {s: sum(1 for t in out if t["status"] == s) for s in STATUSES}
    if summary.get("tests") != len(out):
        raise CTRFError(f"results.summary.tests is {summary.get('tests')!r} but {len(out)} tests are listed")
    for s in STATUSES:
        if s in summary and summary[s] != counted[s]:
            raise CTRFError(f"results.summary.{s} is {summary[s]!r} but {counted[s]} tests have that status")
    return out, summary


def parse_reward(reward_txt: bytes | None, reward_json: bytes | None) -> float | None:
    """Harbor's reading: reward.json first (its 'reward' key, or the mean of its values), else reward.txt."""
    if reward_json is not None:
        try:
            d = json.loads(reward_json)
            vals = [d["reward"]] if "reward" in d else list(d.values())
            vals = [float(v) for v in vals]
            if vals and all(math.isfinite(v) for v in vals):
                return sum(vals) / len(vals)
        except (ValueError, TypeError, AttributeError, KeyError):
            return None
        return None
    if reward_txt is not None:
        try:
            v = float(reward_txt.decode().strip())
            return v if math.isfinite(v) else None
        except (ValueError, UnicodeDecodeError):
            return None
    return None


def build_report(ctrf: bytes | None, reward_txt: bytes | None, reward_json: bytes | None = None,
                 **extra) -> VerifierReport:
    """The verdict from the files the verifier wrote (None for a file it did not write)."""
    reward = parse_reward(reward_txt, reward_json)
    says_pass = reward is not None and reward >= 1.0
    if ctrf is None:
        # a verifier that writes only a reward file (allowed by Harbor): S from it, no P
        why = "S taken from the reward file alone" if reward is not None else "and no readable reward file either"
        return VerifierReport(int(says_pass), int(says_pass), int(not says_pass), 1, False, reward_file=reward,
                              reason=f"{NO_CTRF}; {why}", **extra)
    try:
        tests, _ = parse_ctrf(ctrf)
    except CTRFError as e:
        return VerifierReport(0, 0, 0, 0, False, reward_file=reward, reason=f"invalid CTRF report: {e}", **extra)
    passed = sum(t["status"] == "passed" for t in tests)
    failed = sum(t["status"] in ("failed", "other") for t in tests)
    skipped = len(tests) - passed - failed
    report = VerifierReport(0, passed, failed, len(tests), True, skipped=skipped, reward_file=reward, tests=tests, **extra)
    if not tests:
        report.valid, report.reason = False, "empty test set: not a success"
    elif reward is None:
        report.reason = "no readable reward file: not a success"
    elif says_pass and failed:
        report.valid, report.reason = False, f"reward file says pass but {failed} tests failed"
    elif not says_pass and not failed and passed:
        report.valid, report.reason = False, "reward file says fail but no test failed"
    else:
        report.strict = int(says_pass and passed > 0)
    return report


SHIMS = "/tmp/.rsi-shims"
"""Where the offline verifier shims (`sandbox/shims/`) sit inside a verifier sandbox."""

VERIFIER_DISTS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments", "pytest-json-ctrf")
"""The test runner a Harbor verifier installs, as pure-Python distributions: what the container shims carry."""


def shim_dir() -> Path:
    """The offline shims with this Python filled in, written once per process to a temp directory.

    Harbor's usual test.sh fetches uv and runs `uvx --with pytest... pytest --ctrf ...`; offline, `uv`, `uvx`,
    `pip`, `apt-get` and `curl` of the uv installer resolve to these: pytest and python run from the kit's own
    environment, an install of a package that is already present succeeds, every other install is refused
    with one line in the verifier's output."""
    import sys

    if "host" not in _SHIMS or not _SHIMS["host"].is_dir():
        _SHIMS["host"] = _write_shims(sys.executable)
    return _SHIMS["host"]


def container_shim_dir() -> Path:
    """The same shims for a container without network (the Docker backend): its own `python3`, with the test
    runner (`VERIFIER_DISTS`, pure Python, copied from the kit's environment) first on its path, so a Harbor
    verifier runs offline in an image that has Python but not pytest. An image without python3 gets one line
    saying so in the verifier's output."""
    import importlib.metadata as md
    import shutil

    if "container" not in _SHIMS or not _SHIMS["container"].is_dir():
        out = _write_shims(f"{SHIMS}/python")
        (out / "python").write_text(
            "#!/bin/sh\n# the container's python3 with the kit's test runner first on its path\n"
            "for p in /usr/local/bin/python3 /usr/bin/python3 /bin/python3; do\n"
            f'  [ -x "$p" ] && PYTHONPATH={SHIMS}/site${{PYTHONPATH:+:$PYTHONPATH}} exec "$p" "$@"\n'
            "done\n"
            "echo 'rsi-lite offline shim: this image has no python3, so pytest cannot run offline' >&2; exit 127\n")
        (out / "python").chmod(0o755)
        for name in VERIFIER_DISTS:
            dist = md.distribution(name)
            for f in dist.files or []:
                if "__pycache__" in f.parts or f.suffix == ".pyc" or ".." in f.parts or f.parts[0] == "bin":
                    continue
                src = Path(dist.locate_file(f))
                if src.is_file():
                    (out / "site" / f).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, out / "site" / f)
        _SHIMS["container"] = out
    return _SHIMS["container"]


def _write_shims(python: str) -> Path:
    src = Path(__file__).parent.parent / "sandbox" / "shims"
    out = Path(tempfile.mkdtemp(prefix="rsi-shims-"))
    for f in src.iterdir():
        (out / f.name).write_text(f.read_text().replace("@PYTHON@", python))
        (out / f.name).chmod(0o755)
    return out


_SHIMS: dict[str, Path] = {}


def run_verifier(task: Task, workspace: Path, *, backend: str = "auto",
                 limits: SandboxLimits | None = None) -> VerifierReport:
    """Copy `workspace` into a fresh sandbox of `task`, run tests/test.sh there, and read the verdict.
    Outside Docker, the offline shims (`shim_dir`) come first on the verifier's PATH."""
    env = replace(task.environment, copies=[])  # the workspace replaces what the Dockerfile copied in
    work = task.environment.workdir
    t0 = time.monotonic()
    with make_sandbox(env, backend=backend, limits=limits, verifier=True) as sb:
        q = lambda p: shlex.quote(sb.shell_path(p))  # noqa: E731
        sb.exec(f"find {q(work)} {q('/logs/verifier')} -mindepth 1 -delete 2>/dev/null; true", timeout=30)
        sb.upload(workspace, work)
        return _run_tests(sb, task, t0)


def _run_tests(sb: Sandbox, task: Task, t0: float) -> VerifierReport:
    """Copy the tests to /tests, run test.sh (the offline shims first on PATH wherever the sandbox has no
    network: always outside Docker, and in a container unless the task allows the internet), read the verdict."""
    q = lambda p: shlex.quote(sb.shell_path(p))  # noqa: E731
    sb.upload(task.tests_dir, "/tests")
    run = f"bash {q('/tests/test.sh')}"
    offline = sb.backend != "docker" or not task.environment.allow_internet
    if offline:
        sb.upload(shim_dir() if sb.backend != "docker" else container_shim_dir(), SHIMS)
        # the uv installer's `source $HOME/.local/bin/env` finds a file; the shims come first on PATH
        run = (f"chmod +x {q(SHIMS)}/*; mkdir -p \"$HOME/.local/bin\" && touch \"$HOME/.local/bin/env\"; "
               f"PATH={q(SHIMS)}:$PATH {run}")
    r = sb.exec(run, timeout=task.verifier_timeout_sec)
    files = {n: sb.read_file(f"/logs/verifier/{n}") for n in ("ctrf.json", "reward.txt", "reward.json")}
    return build_report(files["ctrf.json"], files["reward.txt"], files["reward.json"],
                        duration=time.monotonic() - t0, timed_out=r.timed_out, output_tail=r.output[-2000:])


VERIFIER_MODES = ("fresh", "shared")
"""fresh: the kit's default, a new sandbox holding a copy of the workspace; shared: Harbor's, the agent's own
sandbox after the agent phase (for tests that need a server the agent left running)."""


def verify_in_place(sb: Sandbox, task: Task) -> VerifierReport:
    """Harbor's mode: the tests run in the agent's own sandbox once it has finished, so whatever it left running
    answers them (and could also interfere: what the fresh mode rules out). /tests and /logs/verifier are
    emptied first, so nothing the agent planted there is read. The sandbox must have been made with a /tests
    folder (`make_sandbox(..., verifier=True)`)."""
    q = lambda p: shlex.quote(sb.shell_path(p))  # noqa: E731
    sb.exec(f"mkdir -p {q('/tests')} {q('/logs/verifier')}; find {q('/tests')} {q('/logs/verifier')} -mindepth 1 "
            f"-delete 2>/dev/null; true", timeout=30)
    return _run_tests(sb, task, time.monotonic())


def tree_fingerprint(root: Path) -> str:
    """A hash of a workspace as a fresh verifier receives it: every entry's path, kind and permission bits, a
    file's bytes, a symlink's target. Times and owners are left out, as the copy does not carry them either
    (`Sandbox.download`), so a command that only reads (`cat`, `ls`) leaves the fingerprint as it was."""
    h = hashlib.sha256()
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            h.update(f"{os.path.relpath(p, root)}\0{st.st_mode:o}\0".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    while chunk := f.read(1 << 20):
                        h.update(chunk)
            h.update(b"\1")
    return h.hexdigest()


def verify_sandbox(sb: Sandbox, task: Task, *, mode: str = "fresh", memo: dict | None = None,
                   **kw) -> VerifierReport:
    """Snapshot an agent's workspace and verify the snapshot (the agent's sandbox stays as it is); with
    `mode="shared"`, Harbor's way instead: the tests run in the agent's sandbox itself (`verify_in_place`).

    `memo` (fresh mode; one dict per episode): verdicts by the snapshot's `tree_fingerprint`. A snapshot equal to
    one verified before gets that verdict back without running the tests again: a fresh verifier sees nothing
    but the snapshot and the task's tests, so equal snapshots get equal verdicts. Verifying after every action
    (`RolloutConfig.verify_turns`, the verifier-feedback harness) then runs the tests only after actions that
    changed the workspace. `memo["hits"]` counts the verdicts given back."""
    if mode == "shared":
        return verify_in_place(sb, task)
    if mode != "fresh":
        raise ValueError(f"verifier mode {mode!r}: expected one of {', '.join(VERIFIER_MODES)}")
    tmp = Path(tempfile.mkdtemp(prefix="rsi-verify-"))
    try:
        sb.download(task.environment.workdir, tmp / "ws")
        if memo is None:
            return run_verifier(task, tmp / "ws", backend=sb.backend, **kw)
        key = tree_fingerprint(tmp / "ws")
        if key in memo:
            memo["hits"] = memo.get("hits", 0) + 1
            return replace(memo[key], tests=[dict(t) for t in memo[key].tests])
        memo[key] = run_verifier(task, tmp / "ws", backend=sb.backend, **kw)
        return memo[key]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def attempt(task: Task, commands: list[str], *, backend: str = "auto", limits: SandboxLimits | None = None,
            mode: str = "fresh"):
    """Run `commands` in a fresh sandbox of `task`, then verify: (command results, report)."""
    with make_sandbox(task, backend=backend, limits=limits, verifier=mode == "shared") as sb:
        results = [sb.exec(c) for c in commands]
        return results, verify_sandbox(sb, task, limits=limits, mode=mode)


def run_reference(sb: Sandbox, task: Task):
    """Run the task's solution/solve.sh (the oracle) in an open sandbox of it; its command result."""
    sb.upload(task.solution_dir, "/tmp/solution")  # Harbor mounts it at /solution; /tmp is writable everywhere
    return sb.exec(f"bash {shlex.quote(sb.shell_path('/tmp/solution/solve.sh'))}", timeout=task.agent_timeout_sec)


def solve_with_reference(task: Task, *, backend: str = "auto", limits: SandboxLimits | None = None,
                         mode: str = "fresh"):
    """Run the task's solution/solve.sh (the oracle), then verify: (command result, report)."""
    with make_sandbox(task, backend=backend, limits=limits, verifier=mode == "shared") as sb:
        return run_reference(sb, task), verify_sandbox(sb, task, limits=limits, mode=mode)
