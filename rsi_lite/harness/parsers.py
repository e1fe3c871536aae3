"""Action parsers: from a model's reply to the commands it wants run.

Two formats, selectable per harness:

    bash   a fenced ```bash block (the default for small models); the block's text is one
           command (several lines allowed). A reply without a block that says it is done
           (`TASK COMPLETE`, `DONE`, `<done>`) ends the episode.
    json   Terminus 2: {"analysis": ..., "plan": ..., "commands": [{"keystrokes": "ls\\n",
           "duration": 0.1}], "task_complete": false}. Text around the object is tolerated
           with a warning; a missing or malformed object is a parse error.

Both tolerate junk (prompt characters, unclosed fences, extra prose) and answer a parse
error with a short correction message for the next turn, as Terminus 2 does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

MAX_DURATION = 60.0
DONE_WORDS = re.compile(r"(?im)^\s*(?:<done>|task[ _]complete[.!]?|done[.!]?)\s*$")
FENCE = re.compile(r"```[ \t]*(?P<lang>[A-Za-z0-9_+-]*)[ \t]*\n(?P<body>.*?)(?:\n?```|\Z)", re.S)
SHELL_LANGS = {"", "bash", "sh", "shell", "console", "zsh", "terminal"}
# a shell prompt copied before a command; a bare "# " is not one: in a bash block it starts a comment
PROMPT = re.compile(r"^\s*(?:\$|>|root@[^:]*:[^$#]*[$#])\s+")


@dataclass
class Command:
    keystrokes: str
    """What is typed; a command runs when it ends with a newline."""
    duration: float = 1.0
    """Seconds to wait for it (Terminus 2's hint; our sandbox uses it as the command's timeout floor)."""

    @property
    def runs(self) -> bool:
        return self.keystrokes.endswith("\n")


@dataclass
class ParsedAction:
    commands: list[Command] = field(default_factory=list)
    task_complete: bool = False
    error: str | None = None
    """Set when nothing usable was found; `correction()` is then the reply to the model."""
    warnings: list[str] = field(default_factory=list)
    analysis: str = ""
    plan: str = ""

    def correction(self) -> str:
        return f"Previous response had parsing errors:\n{self.error}\n\nPlease fix these issues and provide a proper response."


def _clean_block(body: str) -> str:
    lines = [PROMPT.sub("", line) for line in body.strip("\n").splitlines()]
    return "\n".join(lines).strip()


def parse_bash(text: str) -> ParsedAction:
    """The first shell code block is the command; no block and a done marker ends the episode."""
    for m in FENCE.finditer(text):
        if m.group("lang").lower() in SHELL_LANGS:
            cmd = _clean_block(m.group("body"))
            if cmd:
                warnings = ["several code blocks: only the first was run"] if len(FENCE.findall(text)) > 1 else []
                return ParsedAction([Command(cmd + "\n")], warnings=warnings)
    if DONE_WORDS.search(text):
        return ParsedAction(task_complete=True)
    return ParsedAction(error="No ```bash code block found. Reply with exactly one command in a ```bash block, "
                              "or with TASK COMPLETE on its own line when the task is done.")


def _first_json_object(text: str) -> tuple[str | None, str]:
    """The first balanced {...} in `text` (strings respected) and the text around it."""
    start = text.find("{")
    while start != -1:
        depth, in_str, esc = 0, False, False
        for i in range(start, len(text)):
            c = text[i]
            if in_str:
                esc = (c == "\\") and not esc
                if c == '"' and not esc:
                    in_str = False
                continue
            if c == '"':
                in_str = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i + 1], (text[:start] + text[i + 1:]).strip()
        start = text.find("{", start + 1)
    return None, text


def parse_terminus_json(text: str) -> ParsedAction:
    """Terminus 2's JSON reply: analysis, plan, commands [{keystrokes, duration}], task_complete."""
    stripped = re.sub(r"```(?:json)?", "", text)
    obj_text, rest = _first_json_object(stripped)
    if obj_text is None:
        return ParsedAction(error="No JSON object found. Reply with one JSON object with the fields analysis, plan, "
                                  "commands and task_complete.")
    try:
        obj = json.loads(obj_text)
    except json.JSONDecodeError as e:
        return ParsedAction(error=f"Invalid JSON: {e.msg} at position {e.pos}.")
    warnings = ["Extra text detected outside of the JSON object"] if rest else []
    missing = [k for k in ("analysis", "plan", "commands") if k not in obj]
    if missing:
        return ParsedAction(error=f"Missing required fields: {', '.join(missing)}.")
    if not isinstance(obj["commands"], list):
        return ParsedAction(error="Field 'commands' must be a list.")
    cmds = []
    for i, c in enumerate(obj["commands"]):
        if not isinstance(c, dict) or not isinstance(c.get("keystrokes"), str):
            return ParsedAction(error=f"Command {i + 1} must be an object with a string field 'keystrokes'.")
        try:
            duration = float(c.get("duration", 1.0))
        except (TypeError, ValueError):
            return ParsedAction(error=f"Command {i + 1}: 'duration' must be a number.")
        cmds.append(Command(c["keystrokes"], min(max(duration, 0.0), MAX_DURATION)))
    complete = obj.get("task_complete", False)
    if isinstance(complete, str):
        complete = complete.strip().lower() == "true"
    return ParsedAction(cmds, bool(complete), None, warnings, str(obj.get("analysis", "")), str(obj.get("plan", "")))


PARSERS = {"bash": parse_bash, "json": parse_terminus_json}


def runnable_commands(text: str, fmt: str = "bash") -> list[str]:
    """The shell commands one action runs, in order (what a replay of the episode executes)."""
    return [c.keystrokes.rstrip("\n") for c in parse_action(text, fmt).commands if c.runs]


def parse_action(text: str, fmt: str = "bash") -> ParsedAction:
    try:
        return PARSERS[fmt](text)
    except KeyError:
        raise ValueError(f"unknown action format {fmt!r}; choose bash or json") from None
