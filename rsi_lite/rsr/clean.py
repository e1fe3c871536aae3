"""Clean training examples: the conversation as if from the public instruction alone.

From a trajectory (a guided re-solve, or for the ablation a discovery success) we keep the
instruction, the model's actions and the terminal's observations, and drop:
- guidance (the private runbook) and every other control message (worked examples,
  phase prompts, verifier feedback);
- an action the harness refused (a parse error, "too early"): the control message that
  answered it is gone, so the action would stand unanswered.
The system prompt becomes the plain harness's. Action tokens are the stored ids, never
re-encoded from their text; everything else is encoded from the chat template, segment by
segment (`trajectory.TokenStream`). Then the check the training relies on: encoding the
whole clean conversation in one piece gives exactly the same ids (`retokenizes`). An
example that fails it is kept out of the dataset and counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..harness.harnesses import make_harness
from ..harness.messages import Message
from ..harness.prompts import task_instruction
from ..rollout.trajectory import TokenStream, Trajectory, stop_token_ids
from ..tasks.spec import task_kind


@dataclass
class Example:
    """One SFT example: ids and the loss mask (1 on the model's own action tokens)."""

    task: str
    family: str
    source: str
    """'resolve' (a clean guided re-solve) or 'discovery' (a stripped discovery success, the ablation)."""
    messages: list[dict]
    input_ids: list[int]
    loss_mask: list[int]
    retokenizes: bool
    kind: str = ""
    """The task's kind (`tasks.spec.task_kind`), which `RPRConfig.replay_by` "kind" groups by; "" in datasets
    written before 2026-12-07."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Example":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k != "kind"}, kind=d.get("kind", ""))


def action_ids(traj: Trajectory) -> list[list[int]]:
    """The stored token ids of each action, in order."""
    return [traj.token_ids[a:b] for a, b in traj.turn_spans]


def clean_turns(traj: Trajectory) -> list[tuple[dict, list[int] | None]]:
    """(message, stored action ids or None) of the public conversation, in order."""
    ids = iter(action_ids(traj))
    paired = [(m, next(ids) if m["kind"] == "action" else None) for m in traj.messages]
    out = []
    for i, (m, a) in enumerate(paired):
        if m["kind"] == "action":
            answer = []
            for n, _ in paired[i + 1:]:
                if n["kind"] == "action":
                    break
                answer.append(n["kind"])
            if "control" in answer and "observation" not in answer:
                continue  # refused by the harness: nothing answers it in the clean conversation
            out.append((m, a))
        elif m["kind"] in ("instruction", "observation"):
            out.append((m, None))
    while out and out[-1][0]["kind"] != "action":
        out.pop()  # a trailing observation teaches nothing
    return out


def build_example(tokenizer, traj: Trajectory, source: str) -> Example | None:
    """The clean example of a trajectory; None if it keeps no action."""
    turns = clean_turns(traj)
    if not any(m["kind"] == "action" for m, _ in turns):
        return None
    system = make_harness("plain", action_format=traj.action_format).system_prompt()
    stop = stop_token_ids(tokenizer)
    first = [Message(m["kind"], m["content"]) for m, _ in turns[:1]]
    stream = TokenStream(tokenizer, system, first)
    for m, ids in turns[1:]:
        if m["kind"] == "action":
            stream.add_action(ids, [0.0] * len(ids), stop)
        else:
            stream.add_messages([Message(m["kind"], m["content"])])
    input_ids = stream.ids()
    mask = [x for s in stream.segments for x in s.mask]
    whole = tokenizer.encode(tokenizer.apply_chat_template(stream.chat, tokenize=False), add_special_tokens=False)
    instruction = next((m["content"] for m, _ in turns if m["kind"] == "instruction"), "")
    kind = task_kind(traj.family, traj.difficulty, task_instruction(instruction))
    return Example(traj.task, traj.family, source, [m for m, _ in turns], input_ids, mask, whole == input_ids, kind)
