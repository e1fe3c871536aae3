"""Passing prefixes: an episode that was right before it went wrong, or before it went on writing.

The 135M model often solves a task in one action and overwrites the result in the next
(`head -n 2 a > b`, then `cat a > b`). Replaying the episode's commands in a fresh sandbox of
the task, action by action, and verifying the workspace after each, finds the first action
after which the protected verifier passes; the episode cut there keeps only the model's own
tokens up to that action. Used by the RSR stage's `keep_passing_prefix` (failed episodes).

A successful episode can carry the same habit and pass anyway: `grep -c ' ERROR ' a > n.txt`,
then `cat n.txt > a` rewrites a file the checks do not read. Trained on whole, it teaches the
overwrite that fails elsewhere. The replay also fingerprints the workspace when it first passes
and at the end; a success whose later actions changed it is cut too (`trim_after_pass`).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from ..rollout.trajectory import Trajectory


def passing_prefix(traj: Trajectory, task, backend: str = "auto", trim: bool = False) -> int | None:
    """The fewest leading actions whose commands, replayed in one fresh sandbox of `task`, leave a workspace its
    verifier passes (strict, checked on a snapshot after each action that ran a command), for a failed
    episode; with `trim`, for a successful one too when its later actions change the workspace from that
    passing state. None when no proper prefix does (or, for a success, when it only looked afterwards)."""
    from ..harness.parsers import runnable_commands
    from ..sandbox import make_sandbox, workspace_state
    from ..verify.verifier import verify_sandbox

    success = bool(traj.verifier.get("strict"))
    if success and not trim:
        return None
    actions = [m["content"] for m in traj.messages if m["kind"] == "action"]
    first, passed = None, ""
    with make_sandbox(task, backend=backend) as sb:
        for n, text in enumerate(actions[:-1] if not success else actions, 1):
            ran = runnable_commands(text, traj.action_format)
            for command in ran:
                sb.exec(command)
            if first is None and ran and verify_sandbox(sb, task).strict:
                if not success:
                    return n
                first, passed = n, workspace_state(sb, task.environment.workdir)
        if first is not None and first < len(actions) and workspace_state(sb, task.environment.workdir) != passed:
            return first
    return None


def cut_after(traj: Trajectory, n: int) -> Trajectory:
    """The episode as if it had ended after its n-th action (the later messages and tokens dropped)."""
    seen, end = 0, len(traj.messages)
    for i, m in enumerate(traj.messages):
        if m["kind"] == "action":
            seen += 1
            if seen == n:
                end = i + 1
                break
    stop = traj.turn_spans[n - 1][1]
    return Trajectory(**{**asdict(traj), "messages": traj.messages[:end], "token_ids": traj.token_ids[:stop],
                         "action_mask": traj.action_mask[:stop], "logprobs": traj.logprobs[:stop],
                         "turn_spans": traj.turn_spans[:n], "turns": n, "finish_reason": "passing_prefix",
                         "verifier": {**traj.verifier, "strict": 1, "prefix_of": len(traj.turn_spans)}})


def passing_prefixes(trajs: list[Trajectory], backend: str = "auto", workers: int = 8, *, failed: bool = True,
                     trim: bool = False) -> dict[str, int]:
    """{index: n} for each episode to cut after n actions: failed ones with a passing prefix (`failed`) and, with
    `trim`, successes that changed their workspace after first passing."""
    from concurrent.futures import ThreadPoolExecutor

    from ..tasks import load_task

    which = [i for i, t in enumerate(trajs) if (trim if t.verifier.get("strict") else failed)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        found = pool.map(lambda i: passing_prefix(trajs[i], load_task(Path(trajs[i].task_path)), backend, trim), which)
        return {str(i): n for i, n in zip(which, found) if n}
