"""The reviewer: a binary gate that sees only the public instruction and the runbook.

Deterministic gates, always:
  schema      the runbook validates (`runbook.validate`)
  artifacts   every absolute path it names is one the instruction or the workspace names, or a
              file the instruction names inside a directory it names (a runbook about other files
              would teach the wrong task)
  leakage     nothing protected: no test text, no value only the tests hold, no solution
              line, no script (`leakage.find_leaks`)
A model reviewer can be added (`model_review`): the actor answers YES or NO; it can only
reject what the deterministic gates passed, never approve what they rejected.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from .leakage import find_leaks, protected
from .runbook import ABSOLUTE, render, validate


def _public_path(p: str, public: str) -> bool:
    """Named by the public text, or a file the text names (as a whole word) in a directory it names: "Create
    the directory /app/logs and inside it an empty file named today.log" names /app/logs/today.log."""
    if p in public or p in ("/app", "/tmp") or p.startswith(("/tmp/", "/dev/", "/bin/", "/usr/")):
        return True
    parent, _, name = p.rpartition("/")
    return (bool(parent) and bool(name) and _public_path(parent, public)
            and re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w-])", public) is not None)


@dataclass
class Verdict:
    approved: bool
    reasons: list[str] = field(default_factory=list)
    """Why it was rejected (empty when approved)."""

    def to_dict(self) -> dict:
        return asdict(self)


def review(runbook, task) -> Verdict:
    reasons = [f"schema: {e}" for e in validate(runbook)]
    if reasons:
        return Verdict(False, reasons)
    text = render(runbook)
    public = protected(task).public
    for path in ABSOLUTE.findall(text):
        p = path.rstrip("/.")
        if p and not _public_path(p, public):
            reasons.append(f"artifacts: {p} is not named by the instruction or the workspace")
    reasons += [f"leakage: {leak}" for leak in find_leaks(text, task)]
    return Verdict(not reasons, reasons)


REVIEW_PROMPT = """Task:
{instruction}

Proposed notes for solving it:
{notes}

Do these notes describe how to solve this task, without giving the final answer away? Answer YES or NO."""


def model_review(policy, instruction: str, runbook: dict, backend: str = "auto") -> bool:
    """The actor as reviewer (greedy): True when its reply starts with YES; `backend` the generation backend."""
    from ..policy.gen.dispatch import complete

    tok = policy.tokenizer
    chat = [{"role": "user", "content": REVIEW_PROMPT.format(instruction=instruction.strip(), notes=render(runbook))}]
    ids = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
    ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
    gen = complete(policy, [ids], max_new_tokens=4, temperature=0.0, backend=backend)[0]
    return tok.decode(gen.token_ids, skip_special_tokens=True).strip().upper().startswith("YES")
