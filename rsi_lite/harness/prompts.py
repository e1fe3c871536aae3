"""The fixed texts of the harnesses: system prompts, worked examples, phase prompts.

The worked examples use tasks of their own (a notes folder, a word count on a poem, a
config copy) that no family generator produces, so an exemplar never shows a suite's answer;
`tests/test_harness.py` checks that against the suites with the overlap audit's shingles.
"""

SYSTEM_BASH = """You are an AI agent working in a Linux terminal. You are given a task. Solve it by running shell commands.
Reply with exactly one command in a ```bash code block. You will see its output, then reply with the next command.
When the task is done, reply with TASK COMPLETE on its own line (no code block)."""

SYSTEM_JSON = """You are an AI agent working in a Linux terminal. You are given a task. Solve it by running shell commands.
Reply with one JSON object:
{"analysis": "<what you see>", "plan": "<what you will do>", "commands": [{"keystrokes": "ls -la\\n", "duration": 0.1}], "task_complete": false}
Each command's keystrokes must end with \\n to run. Set "task_complete": true when the task is done."""

TASK_TEMPLATE = "Task:\n{instruction}\n\nThe working directory is {workdir}."

# Worked examples: (instruction, [(reply, terminal output), ...])
EXAMPLES = [
    ("Create a file named /app/notes/todo.md that contains the line: buy milk",
     [("mkdir -p /app/notes && echo 'buy milk' > /app/notes/todo.md", ""),
      ("cat /app/notes/todo.md", "buy milk\n")]),
    ("Write the number of words in /app/poem.txt to /app/count.txt.",
     [("wc -w < /app/poem.txt > /app/count.txt", ""),
      ("cat /app/count.txt", "12\n")]),
    ("Copy the file /app/config/default.ini to /app/config/local.ini.",
     [("cp /app/config/default.ini /app/config/local.ini", "")]),
]


def _reply(cmd: str | None, fmt: str) -> str:
    if fmt == "json":
        if cmd is None:
            return '{"analysis": "The task is done.", "plan": "", "commands": [], "task_complete": true}'
        return ('{"analysis": "", "plan": "", "commands": [{"keystrokes": "%s\\n", "duration": 0.1}], '
                '"task_complete": false}' % cmd.replace('"', '\\"'))
    return "TASK COMPLETE" if cmd is None else f"```bash\n{cmd}\n```"


def example_turns(fmt: str) -> list[tuple[str, str]]:
    """The worked examples as (role, text) chat turns: task, reply, output, ..., done."""
    turns = []
    for instruction, steps in EXAMPLES:
        turns.append(("user", TASK_TEMPLATE.format(instruction=instruction, workdir="/app")))
        for cmd, output in steps:
            turns += [("assistant", _reply(cmd, fmt)), ("user", output or "(no output)")]
        turns.append(("assistant", _reply(None, fmt)))
    return turns


PHASES = [
    ("INSPECT", "Look at the files the task mentions (ls, cat, head) before changing anything."),
    ("ACT", "Run the command that does what the task asks."),
    ("CHECK", "Check the result: show the file or the output you produced."),
    ("FINISH", "If the result is right, reply TASK COMPLETE. Otherwise run a command that fixes it."),
]

FEEDBACK = ("A checker ran on your work. These checks still fail: {failing}. Keep going: run the next command "
            "that fixes them.")
FEEDBACK_PASSED = "A checker ran on your work and every check passes."
TOO_EARLY = "Not yet: you are in phase {phase}. Finish that phase first; you can reply TASK COMPLETE in the FINISH phase."
CONFIRM = ("Are you sure you want to mark the task as complete? This will trigger your solution to be graded and "
           "you won't be able to make any further changes. If so, include \"task_complete\": true again.")
