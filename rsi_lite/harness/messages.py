"""Messages with a kind, so harness control text and runbook guidance can be stripped later.

    instruction  the public task instruction (the one thing every harness shares)
    action       the model's own reply: the only tokens it is ever trained on
    observation  terminal output fed back
    control      harness text: worked examples, phase prompts, verifier feedback, corrections
    guidance     a private runbook given during a guided re-solve (never kept for training)
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("instruction", "action", "observation", "control", "guidance")
ROLE_OF = {"instruction": "user", "action": "assistant", "observation": "user", "control": "user", "guidance": "user"}


@dataclass
class Message:
    kind: str
    content: str
    as_role: str | None = None
    """Only for control text shown as an assistant turn (a worked example's replies)."""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"message kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.as_role is not None and (self.kind != "control" or self.as_role not in ("user", "assistant")):
            raise ValueError("only control messages may take another role, and only user or assistant")

    @property
    def role(self) -> str:
        return self.as_role or ROLE_OF[self.kind]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "role": self.role, "content": self.content}

    @classmethod
    def from_dict(cls, d: dict) -> "Message":
        role = d.get("role")
        return cls(d["kind"], d["content"], role if d["kind"] == "control" and role != ROLE_OF["control"] else None)


def strip_kinds(messages: list[Message], kinds=("control", "guidance")) -> list[Message]:
    """The conversation without the given kinds (by default: as if from the public instruction alone)."""
    return [m for m in messages if m.kind not in kinds]
