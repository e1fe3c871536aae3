"""Action parsers and message kinds.  Run: pytest tests/harness/test_parsers.py"""

import pytest

from rsi_lite.harness import Message, parse_action, strip_kinds


@pytest.mark.parametrize("reply, command", [
    ("```bash\necho hi > hello.txt\n```", "echo hi > hello.txt"),
    ("Sure! Here it is:\n```sh\n$ ls -la\n```\nThis lists files.", "ls -la"),
    ("```\ncat a.txt\n```", "cat a.txt"),
    ("```bash\nmkdir d\ncd d\n", "mkdir d\ncd d"),  # unclosed fence: the rest of the reply
    ("```console\nroot@box:/app# wc -l x\n```", "wc -l x"),
    ("```bash\n# make the file\ntouch a\n```", "# make the file\ntouch a"),  # a comment, not a root prompt
    ("```python\nprint(1)\n```\n```bash\npython3 x.py\n```", "python3 x.py"),  # the first shell block
])
def test_bash_blocks(reply, command):
    a = parse_action(reply, "bash")
    assert a.error is None and [c.keystrokes for c in a.commands] == [command + "\n"]
    assert a.commands[0].runs


def test_bash_done_and_errors():
    assert parse_action("All good.\nTASK COMPLETE", "bash").task_complete
    assert parse_action("<done>", "bash").task_complete
    a = parse_action("I would use echo.", "bash")
    assert a.error and "```bash" in a.correction() and a.correction().startswith("Previous response had parsing errors")
    assert parse_action("```bash\n\n```", "bash").error


def test_several_blocks_warn():
    a = parse_action("```bash\nls\n```\n```bash\npwd\n```", "bash")
    assert [c.keystrokes for c in a.commands] == ["ls\n"] and a.warnings


def test_terminus_json():
    reply = ('{"analysis": "empty dir", "plan": "make file", "commands": [{"keystrokes": "touch a\\n", "duration": 0.1},'
             ' {"keystrokes": "C-c"}], "task_complete": false}')
    a = parse_action(reply, "json")
    assert a.error is None and not a.task_complete and a.analysis == "empty dir"
    assert [(c.keystrokes, c.duration, c.runs) for c in a.commands] == [("touch a\n", 0.1, True), ("C-c", 1.0, False)]


def test_terminus_json_tolerates_fences_and_prose_with_a_warning():
    a = parse_action('Here:\n```json\n{"analysis": "a {b}", "plan": "", "commands": [], "task_complete": "true"}\n```', "json")
    assert a.error is None and a.task_complete and a.warnings and a.analysis == "a {b}"


@pytest.mark.parametrize("reply, msg", [
    ("no json here", "No JSON object"),
    ('{"analysis": "x", "plan": "y"}', "Missing required fields: commands"),
    ('{"analysis": "x", "plan": "y", "commands": "ls"}', "must be a list"),
    ('{"analysis": "x", "plan": "y", "commands": [{"keys": "ls"}]}', "keystrokes"),
    ('{"analysis": "x", "plan": "y", "commands": [{"keystrokes": "ls", "duration": "soon"}]}', "duration"),
    ('{"analysis": "x", "plan": "y", "commands": [}', "Invalid JSON"),
])
def test_terminus_json_errors(reply, msg):
    a = parse_action(reply, "json")
    assert a.error and msg in a.error


def test_duration_is_capped():
    a = parse_action('{"analysis": "", "plan": "", "commands": [{"keystrokes": "sleep 99\\n", "duration": 999}]}', "json")
    assert a.commands[0].duration == 60.0


def test_unknown_format():
    with pytest.raises(ValueError):
        parse_action("x", "yaml")


def test_message_kinds_and_stripping():
    msgs = [Message("instruction", "do it"), Message("control", "example: ..."), Message("action", "```bash\nls\n```"),
            Message("observation", "a.txt"), Message("guidance", "runbook"), Message("action", "TASK COMPLETE")]
    assert [m.kind for m in strip_kinds(msgs)] == ["instruction", "action", "observation", "action"]
    assert msgs[2].role == "assistant" and msgs[3].role == "user"
    assert Message.from_dict(msgs[1].to_dict()) == msgs[1]
    with pytest.raises(ValueError):
        Message("system", "x")
