"""The episode record (`Trajectory`, one JSON line) and the token stream it is built from.

Tokens are stored, never re-derived from text. The conversation is a list of segments, one
per chat message, each the token ids of that message's rendering; the model's own reply is
its generated ids verbatim (mask 1, with the sampled-token log-probabilities), everything
else is encoded from the chat template's text (mask 0). Chat templates such as ChatML
render each message independently, so the segments concatenate to exactly the prompt the
model was given at every turn.

Context budget: when the next turn would not fit, the oldest observations are replaced by a
one-line note (their segments re-encoded) until it fits; if it still cannot fit, the episode
ends with finish_reason 'context'. Actions generated before such a cut keep the
log-probabilities they had under the longer context (recorded in `context_cuts`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..harness.messages import Message
from ..records import read_jsonl, write_jsonl_atomic

OMITTED = "[earlier output omitted to fit the context]"


@dataclass
class Segment:
    kind: str
    """A message kind, 'system', 'header' (the assistant turn's opening) or 'close' (its ending)."""
    ids: list[int]
    mask: list[int]
    logprobs: list[float]
    chat_index: int
    """Which chat message this segment renders."""


def _plain(kind: str, ids: list[int], chat_index: int) -> Segment:
    return Segment(kind, ids, [0] * len(ids), [0.0] * len(ids), chat_index)


@dataclass
class Trajectory:
    """One episode, as self-rewrite and PPO train on it."""

    task: str
    task_path: str
    suite: str
    family: str
    difficulty: str
    harness: str
    action_format: str
    policy: str
    seed: int
    system: str
    messages: list[dict]
    token_ids: list[int]
    action_mask: list[int]
    """1 on the model's own generated tokens, 0 elsewhere."""
    logprobs: list[float]
    """Sampled-token log-probabilities on action tokens, 0.0 elsewhere."""
    turn_spans: list[list[int]]
    """[start, end) of each action in token_ids."""
    finish_reason: str
    turns: int
    verifier: dict
    rewards: dict
    tokens: dict
    timings: dict
    context_cuts: int = 0
    turn_verdicts: list = field(default_factory=list)
    """With `RolloutConfig.verify_turns`: the verifier's report after each action (None before any command ran)."""
    turn_rewards: dict = field(default_factory=dict)
    """With `verify_turns`: S, FDR and SPR of each action's verdict ({"spr": [after action 1, ...], ...})."""
    sampler: dict = field(default_factory=dict)
    """What the actions were sampled from, so what `logprobs` are the log-probabilities of: the generation
    backend that served them ('transformers', 'ctranslate2', 'vllm'), its `compute_type` (ctranslate2), and the
    `temperature` and `top_p` (`RolloutConfig`). RPR's rollout correction reads it (`rpr.targets.rollout_correction`);
    empty in records written before it existed."""
    meta: dict = field(default_factory=dict)
    """What the stage that asked for the episode records about it: a guided re-solve's `runbook` (the id of the
    runbook it followed, in the RSR stage's runbooks.jsonl), so that a later step pairs the two by id."""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, line: str) -> "Trajectory":
        d = json.loads(line)
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


class TokenStream:
    """The conversation as token segments; see the module docstring."""

    def __init__(self, tokenizer, system: str, messages: list[Message]):
        self.tok = tokenizer
        self.chat: list[dict] = [{"role": "system", "content": system}]
        self.segments: list[Segment] = [_plain("system", self._encode(self._render(self.chat)), 0)]
        self.cuts = 0
        self._extend(messages)

    def _render(self, chat, gen_prompt=False) -> str:
        return self.tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=gen_prompt)

    def _encode(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False)

    def _decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def _message_ids(self, j: int) -> list[int]:
        """The ids of chat message j alone: its rendering minus everything before it."""
        before = self._render(self.chat[:j])
        after = self._render(self.chat[:j + 1])
        if not after.startswith(before):
            raise ValueError("the chat template does not render messages one after another")
        return self._encode(after[len(before):])

    def _extend(self, messages: list[Message]) -> None:
        for m in messages:
            self.chat.append({"role": m.role, "content": m.content})
            j = len(self.chat) - 1
            self.segments.append(_plain(m.kind, self._message_ids(j), j))

    def _header(self) -> list[int]:
        full = self._render(self.chat, gen_prompt=True)
        return self._encode(full[len(self._render(self.chat)):])

    def prompt_ids(self) -> list[int]:
        """The ids the model is given: every segment, then the assistant header."""
        return self.ids() + self._header()

    def add_action(self, token_ids: list[int], logprobs: list[float], stop_ids: set[int]) -> str:
        """Append the model's reply verbatim; return its text (what the harness parses)."""
        j = len(self.chat)
        header = self._header()
        ended = bool(token_ids) and token_ids[-1] in stop_ids
        content = self._decode(token_ids[:-1] if ended else token_ids)
        as_generated = self._render(self.chat, gen_prompt=True) + self._decode(token_ids)
        self.chat.append({"role": "assistant", "content": content})
        after = self._render(self.chat)
        if not after.startswith(as_generated):
            raise ValueError("the chat template does not render the reply as generated; cannot keep tokens exact")
        self.segments += [_plain("header", header, j),
                          Segment("action", list(token_ids), [1] * len(token_ids), list(logprobs), j),
                          # what the template adds after the reply: the newline after the stop token, or all of it
                          _plain("close", self._encode(after[len(as_generated):]), j)]
        return content

    def add_messages(self, messages: list[Message]) -> None:
        self._extend(messages)

    def ids(self) -> list[int]:
        return [i for s in self.segments for i in s.ids]

    def fit(self, budget: int) -> bool:
        """Cut the oldest observations until prompt + reply fit `budget`; False if they cannot."""
        while len(self.prompt_ids()) > budget:
            k = next((k for k, s in enumerate(self.segments)
                      if s.kind == "observation" and self.chat[s.chat_index]["content"] != OMITTED), None)
            if k is None:
                return False
            j = self.segments[k].chat_index
            self.chat[j] = {**self.chat[j], "content": OMITTED}
            self.segments[k] = _plain("observation", self._message_ids(j), j)
            self.cuts += 1
        return True


def stop_token_ids(tokenizer) -> set[int]:
    ids = {tokenizer.eos_token_id}
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    if isinstance(im_end, int) and im_end != tokenizer.unk_token_id:
        ids.add(im_end)
    return {i for i in ids if i is not None}


def write_trajectories(trajs: list[Trajectory], path: Path) -> None:
    """Write JSONL atomically (temp file, then rename)."""
    write_jsonl_atomic(path, trajs)


def read_trajectories(path: Path) -> list[Trajectory]:
    return read_jsonl(path, Trajectory.from_json, "a trajectory record")
