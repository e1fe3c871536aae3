"""Runbooks: what a verified success teaches, written as milestones, checks and pitfalls.

A runbook is a JSON object, not the answer:

    {"milestones": ["Use `sort` and `uniq` on /app/names.txt to produce /app/unique.txt"],
     "checks":     ["Only read /app/unique.txt with `cat` before finishing; do not write to it again"],
     "pitfalls":   ["`sort -u /app/names` failed: No such file or directory"]}

Two planners write them from a success (a stripped trajectory):
- the model planner: the actor itself is asked for the JSON (K samples). A 135M model
  writes valid JSON rarely, so its schema-pass rate is recorded;
- the extractive planner: the same schema derived deterministically from the trajectory:
  the tools it used and the files of the instruction they touched (milestones), the
  inspections it ran after its last change (checks, worded read-only: told only to "look
  at out.txt with `cat`", the 135M model's re-solves wrote `cat out.txt > out.txt`), the
  commands that failed before it succeeded (pitfalls). It names tools and files, never
  whole commands or outputs.
"""

from __future__ import annotations

import json
import re

from ..harness.parsers import parse_action

FIELDS = {"milestones": (1, 6), "checks": (0, 6), "pitfalls": (0, 6)}
"""Field -> (min items, max items)."""
MAX_ITEM_CHARS = 200
INSPECT = {"ls", "cat", "head", "tail", "wc", "grep", "find", "stat", "file", "echo", "pwd", "less", "tree", "du",
           "diff", "cmp", "md5sum", "sha256sum", "test", "[", "true"}
EXIT = re.compile(r"\[exit code (-?\d+)\]")
# a path starts a word: the /planet/indigo/g of `sed 's/planet/indigo/g'` is not one
ABSOLUTE = re.compile(r"(?<![\w.])/(?:[\w.@%+-]+/?)+")
"""An absolute path (the reviewer's artifact gate reads runbooks with it too)."""
PATHLIKE = re.compile(ABSOLUTE.pattern + r"|(?<![\w./-])[\w-]+\.[A-Za-z0-9]{1,5}\b")
"""An absolute path or a bare file name."""


def validate(obj) -> list[str]:
    """Schema errors of a runbook (empty: valid)."""
    if not isinstance(obj, dict):
        return ["a runbook is a JSON object"]
    errors = [f"unknown field {k!r}" for k in obj if k not in FIELDS]
    for name, (lo, hi) in FIELDS.items():
        items = obj.get(name, [] if lo == 0 else None)
        if not isinstance(items, list):
            errors.append(f"{name}: a list of strings is required")
            continue
        if not lo <= len(items) <= hi:
            errors.append(f"{name}: {len(items)} items, {lo} to {hi} allowed")
        for i, it in enumerate(items):
            if not isinstance(it, str) or not it.strip():
                errors.append(f"{name}[{i}]: a non-empty string is required")
            elif len(it) > MAX_ITEM_CHARS:
                errors.append(f"{name}[{i}]: {len(it)} characters, at most {MAX_ITEM_CHARS}")
    return errors


def render(runbook: dict) -> str:
    """The runbook as the private guidance message of a re-solve."""
    lines = ["Private notes from an earlier solve of this task. Follow them; do not repeat them.", "Steps:"]
    lines += [f"{i}. {m}" for i, m in enumerate(runbook["milestones"], 1)]
    if runbook.get("checks"):
        lines += ["Check:", *(f"- {c}" for c in runbook["checks"])]
    if runbook.get("pitfalls"):
        lines += ["Avoid:", *(f"- {p}" for p in runbook["pitfalls"])]
    return "\n".join(lines)


def parse_runbook(text: str):
    """The first JSON object in a model's reply, or None."""
    start = text.find("{")
    while start != -1:
        depth = 0
        for j in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                try:
                    return json.loads(text[start:j + 1])
                except json.JSONDecodeError:
                    break
        start = text.find("{", start + 1)
    return None


# ---------------------------------------------------------------- extractive planner

def _steps(messages: list[dict], action_format: str = "bash") -> list[tuple[str, str]]:
    """(command, what the terminal answered) for each action that ran a command, its actions read in their
    `action_format` (the trajectory's: bash blocks, or Terminus 2's JSON)."""
    out = []
    for i, m in enumerate(messages):
        if m["kind"] != "action":
            continue
        act = parse_action(m["content"], action_format)
        if act.error or not act.commands:
            continue
        obs = next((n["content"] for n in messages[i + 1:i + 2] if n["kind"] == "observation"), "")
        for c in act.commands:
            out.append((c.keystrokes.strip(), obs))
    return out


def _tools(command: str) -> list[str]:
    tools = []
    for part in re.split(r"\|\||&&|[|;]", command):
        words = part.strip().split()
        while words and ("=" in words[0] and not words[0].startswith("=") or words[0] in ("sudo", "env", "time")):
            words = words[1:]
        if words and words[0] not in tools:
            tools.append(words[0].rsplit("/", 1)[-1])
    return tools


def _files(command: str, instruction: str) -> list[str]:
    """Paths in the command that the instruction names too (public artifacts)."""
    seen = []
    for p in PATHLIKE.findall(command):
        name = p.rstrip("/.")
        named = re.search(rf"(?<![\w.-]){re.escape(name.rsplit('/', 1)[-1])}(?![\w-])", instruction)
        if name and (name in instruction or named) and name not in seen:
            seen.append(name)
    return seen


def _changes(command: str, tools: list[str]) -> bool:
    return any(t not in INSPECT for t in tools) or ">" in command


def extractive_runbook(instruction: str, messages: list[dict], action_format: str = "bash") -> dict | None:
    """Derive a runbook from a stripped successful trajectory whose actions are in `action_format`; None if it ran
    no changing command."""
    steps = _steps(messages, action_format)
    milestones, last_change, pitfalls = [], -1, []
    for i, (cmd, obs) in enumerate(steps):
        tools, files = _tools(cmd), _files(cmd, instruction)
        failed = EXIT.search(obs)
        if failed:
            first = next((ln.strip() for ln in obs.splitlines() if ln.strip() and not EXIT.match(ln.strip())), "")
            pitfalls.append(f"`{tools[0] if tools else cmd.split()[0]}` failed here (exit {failed.group(1)})"
                            + (f": {first[:80]}" if first else ""))
            continue
        if _changes(cmd, tools):
            on = f" on {', '.join(files)}" if files else ""
            milestones.append(f"Use {' and '.join(f'`{t}`' for t in tools)}{on}")
            last_change = i
    if not milestones:
        return None
    checks = []
    for cmd, obs in steps[last_change + 1:]:
        tools, files = _tools(cmd), _files(cmd, instruction)
        if not EXIT.search(obs) and files:
            checks.append(f"Only read {', '.join(files)} with `{tools[0]}` before finishing; do not write to it again")
    targets = [f for f in _files(instruction, instruction) if f.startswith("/")]
    if not checks and targets:
        checks.append(f"Make sure {targets[-1]} is as the task asks before finishing")
    book = {"milestones": milestones[:6], "checks": checks[:6], "pitfalls": pitfalls[:6]}
    return book if not validate(book) else None


# ---------------------------------------------------------------- model planner

PLANNER_PROMPT = """Here is a terminal task and a transcript of how it was solved.

Task:
{instruction}

Transcript:
{transcript}

Write a runbook for solving this task again: a JSON object with "milestones" (the steps, as short sentences),
"checks" (how to confirm the result) and "pitfalls" (mistakes to avoid). Do not copy commands or outputs.
Reply with the JSON object only."""


def transcript(messages: list[dict], limit: int = 1200, action_format: str = "bash") -> str:
    """The planner's view of an episode: each action, then the start of what the terminal answered, cut at `limit`
    characters. A JSON action (Terminus 2) shows as the commands it typed, so its fields do not fill the limit."""
    lines = []
    for m in messages:
        if m["kind"] == "action":
            act = parse_action(m["content"], action_format) if action_format != "bash" else None
            shown = "\n".join(c.keystrokes.strip() for c in act.commands) if act and act.commands else m["content"]
            lines.append(f"$ {shown.strip()}")
        elif m["kind"] == "observation":
            lines.append(m["content"].strip()[:300])
    return "\n".join(lines)[:limit]


def model_runbooks(policy, items: list[tuple[str, list[dict]]], k: int = 4, *, max_new_tokens: int = 160,
                   temperature: float = 0.8, seed: int = 0, backend: str = "auto", transcript_chars: int = 1200,
                   action_format: str = "bash") -> list[list[tuple[dict | None, str]]]:
    """For each (instruction, messages): k sampled replies, each as (runbook or None, raw reply); `backend` the
    generation backend (`policy.gen.dispatch`), the stage's rollout's; the episode shown as `transcript` shows
    it (`transcript_chars`, `action_format`)."""
    from ..policy.gen.dispatch import complete

    tok = policy.tokenizer
    prompts = []
    for instruction, messages in items:
        chat = [{"role": "user", "content": PLANNER_PROMPT.format(instruction=instruction.strip(),
                                                                  transcript=transcript(messages, transcript_chars,
                                                                                        action_format))}]
        ids = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
        ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
        prompts += [list(ids)] * k
    replies = [tok.decode(g.token_ids, skip_special_tokens=True)
               for g in complete(policy, prompts, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed,
                                 backend=backend)]
    out = []
    for i in range(len(items)):
        group = []
        for text in replies[i * k:(i + 1) * k]:
            obj = parse_runbook(text)
            group.append((obj if obj is not None and not validate(obj) else None, text))
        out.append(group)
    return out
