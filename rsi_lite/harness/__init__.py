"""Harnesses: prompts, action parsers and the loops that drive a policy turn by turn.

No model and no training code is imported here: a harness only turns text into commands
and terminal output into the next message.
"""

from .messages import KINDS, Message, strip_kinds
from .parsers import Command, ParsedAction, parse_action

__all__ = ["KINDS", "Command", "Message", "ParsedAction", "parse_action", "strip_kinds"]
