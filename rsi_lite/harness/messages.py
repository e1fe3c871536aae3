"""Messages with a kind, so harness control text and runbook guidance can be stripped later.

    instruction  the public task instruction (the one thing every harness shares)
    action       the model's own reply: the only tokens it is ever trained on
    observation  terminal output fed back
    control      harness text: worked examples, phase prompts, verifier feedback, corrections
    guidance     a private runbook given during a guided re-solve (never kept for training)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

KINDS = ("instruction", "action", "observation", "control", "guidance")
ROLE_OF = {"instruction": "user", "action": "assistant", "observation": "user", "control": "user", "guidance": "user"}


@dataclass
class Message:
    kind: str
    content: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"message kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    @property
    def role(self) -> str:
        return ROLE_OF[self.kind]

    def to_dict(self) -> dict:
        return {**asdict(self), "role": self.role}

    @classmethod
    def from_dict(cls, d: dict) -> "Message":
        return cls(d["kind"], d["content"])


def strip_kinds(messages: list[Message], kinds=("control", "guidance")) -> list[Message]:
    """The conversation without the given kinds (by default: as if from the public instruction alone)."""
    return [m for m in messages if m.kind not in kinds]
