"""The four harnesses: plain (the target), exemplar, state-machine and verifier-feedback.

A harness turns the model's reply into commands, runs them through a callback, and says
what the model sees next. It knows nothing of models, tokens or training: the rollout
engine calls `start` once and `step` once per turn.

    plain              instruction, then the terminal output of each command (Terminus-2-like)
    exemplar           plain + three worked example trajectories before the instruction, chosen from a
                       fixed set (no suite or pool task) for the words they share with the task
    state_machine      exemplar + a phase prompt every turn: inspect, act, check, finish
    verifier_feedback  exemplar + after each turn the protected verifier runs on a copy of the
                       workspace and the model is told which checks still fail (names only,
                       never the tests' code); the episode ends when every check passes

The two last ones build on the exemplar harness because, on the bundled 135M model, neither
phases nor feedback alone get a reply in the right format, and the worked examples do
(docs/experiments.md, "Figures behind the code's choices").

Everything a helper harness adds is a `control` message, so a success found with help can
be stripped back to what the plain harness would have shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .messages import Message
from .parsers import parse_action
from .prompts import (
    CONFIRM,
    FEEDBACK,
    FEEDBACK_PASSED,
    PHASES,
    SYSTEM_BASH,
    SYSTEM_JSON,
    TASK_TEMPLATE,
    TOO_EARLY,
    choose_examples,
    example_turns,
)

RunFn = Callable[[str, float], object]
"""run(command, timeout) -> a CommandResult (anything with `for_model()`)."""
VerifyFn = Callable[[], object]
"""verify() -> a VerifierReport of the current workspace (a snapshot; the episode goes on)."""


@dataclass
class HarnessState:
    turn: int = 0
    done: bool = False
    finish_reason: str = ""
    """'complete' (the model said so), 'verified' (feedback harness: all checks pass), 'max_turns', 'context'."""
    confirm_pending: bool = False
    phase: int = 0
    parse_errors: int = 0
    commands_run: int = 0

    def finish(self, reason: str) -> None:
        self.done, self.finish_reason = True, reason


def cap_text(text: str, limit: int) -> str:
    """Keep the first and last halves of an over-long observation (as Terminus 2 does)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


class Harness:
    name = "plain"

    def __init__(self, action_format: str = "bash", max_turns: int = 8, observation_chars: int = 1500,
                 command_timeout: float = 20.0):
        if action_format not in ("bash", "json"):
            raise ValueError(f"action_format must be 'bash' or 'json', got {action_format!r}")
        self.action_format = action_format
        self.max_turns = max_turns
        self.observation_chars = observation_chars
        self.command_timeout = command_timeout

    def system_prompt(self) -> str:
        return SYSTEM_JSON if self.action_format == "json" else SYSTEM_BASH

    def start(self, instruction: str, workdir: str = "/app", guidance: str | None = None) -> list[Message]:
        """The opening messages. `guidance` (a runbook, during a guided re-solve) is a message of its own kind,
        so that cleaning can delete it and leave the public conversation. It goes just before the instruction:
        a small model answers the last message it sees: notes after the task were continued as a list, and
        the re-solves failed (docs/experiments.md, "Figures behind the code's choices")."""
        task = Message("instruction", TASK_TEMPLATE.format(instruction=instruction.strip(), workdir=workdir))
        notes = [Message("guidance", guidance)] if guidance else []
        return [*self._preamble(instruction), *notes, task, *self._after_start()]

    def step(self, state: HarnessState, reply: str, run: RunFn, verify: VerifyFn) -> list[Message]:
        """Act on one reply; return the messages the model sees next (none once the episode is done)."""
        state.turn += 1
        action = parse_action(reply, self.action_format)
        out: list[Message] = []
        if action.error:
            state.parse_errors += 1
            out.append(Message("control", action.correction()))
        else:
            texts = []
            for cmd in action.commands:
                if not cmd.runs:
                    texts.append(f"[keystrokes {cmd.keystrokes!r} were not run: a command must end with a newline]")
                    continue
                result = run(cmd.keystrokes.rstrip("\n"), max(self.command_timeout, cmd.duration))
                state.commands_run += 1
                code = getattr(result, "exit_code", 0)
                texts.append(result.for_model() + (f"\n[exit code {code}]" if code not in (0, None) else ""))
            if action.task_complete and not self._may_finish(state):
                out.append(Message("control", self._too_early(state)))
            elif action.task_complete:
                if self.action_format == "bash" or state.confirm_pending:
                    state.finish("complete")
                    return []
                state.confirm_pending = True
            else:
                state.confirm_pending = False
            if texts or not action.task_complete:
                obs = "\n".join(t.rstrip("\n") for t in texts).strip("\n") or "(no output)"
                out.append(Message("observation", cap_text(obs, self.observation_chars)))
            if state.confirm_pending:
                out.append(Message("control", CONFIRM))
        out += self._after_turn(state, verify)
        if not state.done and state.turn >= self.max_turns:
            state.finish("max_turns")
        return [] if state.done else out

    # hooks for the helper harnesses
    def _may_finish(self, state: HarnessState) -> bool:
        return True

    def _too_early(self, state: HarnessState) -> str:
        return ""

    def _preamble(self, instruction: str) -> list[Message]:
        return []

    def _after_start(self) -> list[Message]:
        return []

    def _after_turn(self, state: HarnessState, verify: VerifyFn) -> list[Message]:
        return []


class ExemplarHarness(Harness):
    name = "exemplar"
    examples = 3
    """How many worked examples each episode shows, chosen from the fixed set for their likeness to the task."""

    def _preamble(self, instruction: str) -> list[Message]:
        # the examples are earlier turns of the conversation, so the model sees replies in its own role
        turns = example_turns(self.action_format, choose_examples(instruction, self.examples))
        return [Message("control", text, as_role=role) for role, text in turns]


class StateMachineHarness(ExemplarHarness):
    name = "state_machine"

    def _phase(self, i: int) -> Message:
        name, text = PHASES[i]
        return Message("control", f"Phase {i + 1}/{len(PHASES)} {name}: {text}")

    # The phase prompt goes *before* the instruction or the terminal output: a small model
    # answers the last message it sees, and the worked examples end each turn on a task or
    # an output, never on a harness remark.
    def start(self, instruction: str, workdir: str = "/app", guidance: str | None = None) -> list[Message]:
        msgs = super().start(instruction, workdir, guidance)
        k = next(i for i, m in enumerate(msgs) if m.kind == "instruction")
        return [*msgs[:k], self._phase(0), *msgs[k:]]

    def step(self, state: HarnessState, reply: str, run: RunFn, verify: VerifyFn) -> list[Message]:
        out = super().step(state, reply, run, verify)
        phase = [m for m in out if m.content.startswith("Phase ")]
        return phase + [m for m in out if not m.content.startswith("Phase ")]

    def _after_turn(self, state: HarnessState, verify: VerifyFn) -> list[Message]:
        # inspect -> act -> check -> finish, and back to act while the model has not finished
        state.phase = state.phase + 1 if state.phase < len(PHASES) - 1 else 1
        return [self._phase(state.phase)]

    def _may_finish(self, state: HarnessState) -> bool:
        return PHASES[state.phase][0] == "FINISH"

    def _too_early(self, state: HarnessState) -> str:
        return TOO_EARLY.format(phase=PHASES[state.phase][0])


class VerifierFeedbackHarness(ExemplarHarness):
    name = "verifier_feedback"

    def _after_turn(self, state: HarnessState, verify: VerifyFn) -> list[Message]:
        if state.done or state.commands_run == 0:
            return []
        report = verify()
        if report.strict:
            state.finish("verified")
            return [Message("control", FEEDBACK_PASSED)]
        failing = [t["name"].rsplit("::", 1)[-1].removeprefix("test_") for t in report.tests if t["status"] != "passed"]
        return [Message("control", FEEDBACK.format(failing=", ".join(failing) or "(the checker could not run)"))]


HARNESSES = {h.name: h for h in (Harness, ExemplarHarness, StateMachineHarness, VerifierFeedbackHarness)}


def make_harness(name: str, **kw) -> Harness:
    try:
        return HARNESSES[name](**kw)
    except KeyError:
        raise ValueError(f"unknown harness {name!r}; choose one of {', '.join(HARNESSES)}") from None
