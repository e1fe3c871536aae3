"""Passing prefixes: a failed episode that was right before it went wrong.

The 135M model often solves a task in one action and overwrites the result in the next
(`head -n 2 a > b`, then `cat a > b`). Replaying the episode's commands in a fresh sandbox of
the task, action by action, and verifying the workspace after each, finds the first action
after which the protected verifier passes; the episode cut there keeps only the model's own
tokens up to that action. Used by the RSR stage's `keep_passing_prefix`.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from ..trajectory import Trajectory


def passing_prefix(traj: Trajectory, task, backend: str = "auto") -> int | None:
    """The fewest leading actions of a failed episode whose commands, replayed in one fresh sandbox of `task`,
    leave a workspace its verifier passes (strict, checked on a snapshot after each action that ran a command);
    None when no proper prefix does."""
    from ..harness.parsers import parse_action
    from ..sandbox import make_sandbox
    from ..verify import verify_sandbox

    actions = [m["content"] for m in traj.messages if m["kind"] == "action"]
    with make_sandbox(task, backend=backend) as sb:
        for n, text in enumerate(actions[:-1], 1):
            ran = [c.keystrokes.rstrip("\n") for c in parse_action(text, traj.action_format).commands if c.runs]
            for command in ran:
                sb.exec(command)
            if ran and verify_sandbox(sb, task).strict:
                return n
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


def passing_prefixes(trajs: list[Trajectory], backend: str = "auto", workers: int = 8) -> dict[str, int]:
    """{index: n} for each failed episode with a passing prefix of n actions."""
    from concurrent.futures import ThreadPoolExecutor

    from ..tasks import load_task

    failed = [i for i, t in enumerate(trajs) if not t.verifier.get("strict")]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        found = pool.map(lambda i: passing_prefix(trajs[i], load_task(Path(trajs[i].task_path)), backend), failed)
        return {str(i): n for i, n in zip(failed, found) if n}
