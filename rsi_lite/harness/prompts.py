"""The fixed texts of the harnesses: system prompts, worked examples, phase prompts.

The worked examples are worded like the families' own tasks, so that a small model sees which command
fits, but use other files and values than any family generator produces, so an exemplar shows how and
never a suite's answer;
`tests/test_harness.py` checks that against the suites with the overlap audit's shingles, and
runs every example in a sandbox to check that the outputs it shows are the real ones.
"""

import json
import math
import re
from dataclasses import dataclass

SYSTEM_BASH = """You are an AI agent working in a Linux terminal. You are given a task. Solve it by running shell commands.
Reply with exactly one command in a ```bash code block. You will see its output, then reply with the next command.
When the task is done, reply with TASK COMPLETE on its own line (no code block)."""

SYSTEM_JSON = """You are an AI agent working in a Linux terminal. You are given a task. Solve it by running shell commands.
Reply with one JSON object:
{"analysis": "<what you see>", "plan": "<what you will do>", "commands": [{"keystrokes": "ls -la\\n", "duration": 0.1}], "task_complete": false}
Each command's keystrokes must end with \\n to run. Set "task_complete": true when the task is done."""

TASK_TEMPLATE = "Task:\n{instruction}\n\nThe working directory is {workdir}."


def task_instruction(text: str) -> str:
    """The instruction inside a task message written by `TASK_TEMPLATE`: its heading and its working-directory
    line dropped where present.

    >>> task_instruction(TASK_TEMPLATE.format(instruction="Rename /app/a to /app/b.", workdir="/app"))
    'Rename /app/a to /app/b.'
    """
    head, tail = TASK_TEMPLATE.split("{instruction}")
    tail = tail.split("{workdir}")[0]
    text = text.removeprefix(head)
    return text[:text.rindex(tail)] if tail in text else text

@dataclass(frozen=True)
class Example:
    """One worked example: the task, a shell script that sets up its files, and the turns that solve it.

    Every example is real: `tests/test_harness.py` runs `setup` and then each command in a sandbox and
    checks that the terminal output shown here is what the command prints."""

    instruction: str
    setup: str
    steps: tuple[tuple[str, str], ...]
    """(command, its terminal output) for each turn."""


# The exemplar set: one or two examples for each kind of operation the task families ask for, most in the
# family's wording (the 135M model copies a differently worded example badly) but each with its own file
# names and values, so that no example is a suite or pool task (checked with the overlap audit's shingles).
# The harness shows the few whose instructions share the most words with the task at hand (`choose_examples`).
EXAMPLES = [
    Example("Create a file named /app/notes/todo.md that contains the line: buy milk", "",
            (("mkdir -p /app/notes && echo 'buy milk' > /app/notes/todo.md", ""),
             ("cat /app/notes/todo.md", "buy milk"))),
    Example("Create the directory /app/cache and inside it an empty file named index.db.", "",
            (("mkdir -p /app/cache && touch /app/cache/index.db", ""),
             ("ls /app/cache", "index.db"))),
    Example("Write the number of words in /app/poem.txt to /app/count.txt.",
            "printf 'the sea is calm tonight\nthe tide is full the moon\nlies fair\n' > /app/poem.txt",
            (("wc -w < /app/poem.txt > /app/count.txt", ""),
             ("cat /app/count.txt", "13"))),
    Example("Copy the file /app/config/default.ini to /app/config/local.ini.",
            "mkdir -p /app/config && printf '[main]\ncolor = blue\n' > /app/config/default.ini",
            (("cp /app/config/default.ini /app/config/local.ini", ""),)),
    Example("Rename /app/photo1.jpg to /app/beach.jpg.", "echo jpg > /app/photo1.jpg",
            (("mv /app/photo1.jpg /app/beach.jpg", ""),
             ("ls /app", "beach.jpg"))),
    Example("Replace the word 'draft' with 'final' everywhere in /app/report.md, editing the file in place.",
            "printf 'draft one\nthe draft is done\n' > /app/report.md",
            (("sed -i 's/draft/final/g' /app/report.md", ""),
             ("cat /app/report.md", "final one\nthe final is done"))),
    Example("Save the first 4 lines of /app/diary.txt into /app/start.txt.",
            "seq 1 9 | sed 's/^/day /' > /app/diary.txt",
            (("head -n 4 /app/diary.txt > /app/start.txt", ""),
             ("cat /app/start.txt", "day 1\nday 2\nday 3\nday 4"))),
    Example("Write the contents of /app/shout.txt converted to upper case into a new file /app/loud.txt.",
            "printf 'wake up\nit is late\n' > /app/shout.txt",
            (("tr 'a-z' 'A-Z' < /app/shout.txt > /app/loud.txt", ""),
             ("cat /app/loud.txt", "WAKE UP\nIT IS LATE"))),
    Example("Write the lines of /app/queue.txt to /app/stack.txt, last line first.",
            "printf 'red\ngreen\nblue\n' > /app/queue.txt",
            (("tac /app/queue.txt > /app/stack.txt", ""),
             ("cat /app/stack.txt", "blue\ngreen\nred"))),
    Example("In /app/people.csv, find the age of carol and write just that number to /app/age.txt.",
            "printf 'name,town,age\nbob,york,31\ncarol,leeds,27\n' > /app/people.csv",
            (("head -n 1 /app/people.csv", "name,town,age"),
             ("grep '^carol,' /app/people.csv | cut -d, -f3 > /app/age.txt", ""),
             ("cat /app/age.txt", "27"))),
    Example("Count the data rows of /app/orders.csv (do not count the header line) and write the number to "
            "/app/total.txt.",
            "printf 'id,item\n1,pen\n2,cup\n3,hat\n' > /app/orders.csv",
            (("tail -n +2 /app/orders.csv | wc -l > /app/total.txt", ""),
             ("cat /app/total.txt", "3"))),
    Example("Edit the config file /app/db.ini: set timeout to 30. Keep the 'key = value' format and leave the "
            "other settings unchanged.",
            "printf 'host = local\ntimeout = 10\nretries = 2\n' > /app/db.ini",
            (("sed -i 's/^timeout = .*/timeout = 30/' /app/db.ini", ""),
             ("cat /app/db.ini", "host = local\ntimeout = 30\nretries = 2"))),
    Example("Create an executable shell script /app/hello.sh that prints exactly: hi there", "",
            (("printf '#!/bin/bash\\necho \"hi there\"\\n' > /app/hello.sh && chmod +x /app/hello.sh", ""),
             ("/app/hello.sh", "hi there"))),
    Example("The script /app/run.sh should write 'all good' to /app/status.txt, but it fails. Fix the script "
            "and run it.",
            "printf '#!/bin/bash\\ncd /app\\nech \"all good\" > status.txt\\n' > /app/run.sh",
            (("cat /app/run.sh", '#!/bin/bash\ncd /app\nech "all good" > status.txt'),
             ("sed -i 's/^ech /echo /' /app/run.sh && bash /app/run.sh", ""),
             ("cat /app/status.txt", "all good"))),
    Example("Count the lines of /app/events.log with the level ERROR and write the number to /app/errors.txt.",
            "printf '09:00 INFO start\n09:01 ERROR disk\n09:02 WARN slow\n09:03 ERROR net\n' > /app/events.log",
            (("grep -c ' ERROR ' /app/events.log > /app/errors.txt", ""),
             ("cat /app/errors.txt", "2"))),
    Example("Extract the archive /app/backup.tar.gz into the directory /app/restore.",
            "mkdir -p /tmp/src && echo hi > /tmp/src/a.txt && tar -czf /app/backup.tar.gz -C /tmp/src a.txt",
            (("mkdir -p /app/restore && tar -xzf /app/backup.tar.gz -C /app/restore", ""),
             ("ls /app/restore", "a.txt"))),
    Example("Pack the folder /app/photos into the gzip tar archive /app/photos.tar.gz.",
            "mkdir -p /app/photos && echo x > /app/photos/cat.jpg",
            (("tar -czf /app/photos.tar.gz -C /app photos", ""),
             ("tar -tzf /app/photos.tar.gz", "photos/\nphotos/cat.jpg"))),
    Example("The function halve in /app/calc.py should be a function that divides x by 2, but it has a bug. "
            "Fix it.",
            "printf 'def halve(x):\\n    return x * 2\\n' > /app/calc.py",
            (("cat /app/calc.py", "def halve(x):\n    return x * 2"),
             ("sed -i 's/x \\* 2/x \\/ 2/' /app/calc.py", ""),
             ("cd /app && python3 -c 'from calc import halve; print(halve(8))'", "4.0"))),
    # A second example of three operations the 135M model copied wrongly from one: on their 16 easy pool tasks,
    # exemplar and verifier-feedback harnesses at temperature 0.3, it wrote `tail -n 3` for the first lines,
    # merged the CSV example's `head -n 1` look into its lookup, wrote the new file outside the new directory;
    # with these three it solved some (docs/experiments.md, "Figures behind the code's choices"). Last in the
    # set, since ties between equally similar examples keep the set's order.
    Example("Save the first 2 lines of /app/menu.txt into /app/top.txt.", "printf 'soup\nbread\ncake\n' > /app/menu.txt",
            (("head -n 2 /app/menu.txt > /app/top.txt", ""),
             ("cat /app/top.txt", "soup\nbread"))),
    Example("In /app/stock.csv, find the price of pear and write just that number to /app/price.txt.",
            "printf 'fruit,shop,price\napple,north,3\npear,south,5\n' > /app/stock.csv",
            (("grep '^pear,' /app/stock.csv | cut -d, -f3 > /app/price.txt", ""),
             ("cat /app/price.txt", "5"))),
    Example("Create the directory /app/logs and inside it an empty file named today.log.", "",
            (("mkdir -p /app/logs && touch /app/logs/today.log", ""),
             ("ls /app/logs", "today.log"))),
]

_STOP = frozenset("""a an and any app as at be but by each every file for from have in into is it its
itself just new of on only or so that the then this to with write""".split())


def _words(text: str) -> set[str]:
    """Lower-case words less stop words, crudely stemmed (lines/line, editing/edit)."""
    words = (re.sub(r"(ing|ed|s)$", "", w) if len(w) > 4 else w for w in re.findall(r"[a-z]+", text.lower()))
    return {w for w in words if w not in _STOP and len(w) > 1}


_BAGS = [_words(ex.instruction) for ex in EXAMPLES]
_IDF = {w: math.log(len(_BAGS) / sum(w in b for b in _BAGS)) for b in _BAGS for w in b}


def _extensions(text: str) -> set[str]:
    return set(re.findall(r"\.([a-z][a-z0-9]*)\b", text.lower()))


_EXTS = [_extensions(ex.instruction) for ex in EXAMPLES]


def choose_examples(instruction: str, n: int = 3) -> list[Example]:
    """The `n` examples whose instructions share the most words with `instruction`, each shared word
    weighted by how rare it is in the set (idf, so 'txt' counts less than 'csv'); most similar last,
    since a small model follows the example nearest to the task. Among equal scores the example with more
    of the task's kinds of file (extensions) goes first, the file type deciding the tool, then the set's
    order. (The tie is real: for "Count the data rows of /app/x.csv ... write the number to /app/y.txt" a
    CSV lookup and "Write the number of words in /app/poem.txt ..." scored the same, and the set's order
    chose the poem; the 135M model solved such tasks with the CSV lookup shown and almost never with the poem:
    docs/experiments.md, "Figures behind the code's choices".)"""
    words, exts = _words(instruction), _extensions(instruction)
    score = [round(sum(_IDF[w] for w in words & b), 9) for b in _BAGS]  # rounded: equal sums are ties
    ranked = sorted(range(len(EXAMPLES)), key=lambda i: (-score[i], -len(exts & _EXTS[i]), i))
    return [EXAMPLES[i] for i in reversed(ranked[:n])]


def _reply(cmd: str | None, fmt: str) -> str:
    if fmt == "json":
        if cmd is None:
            return '{"analysis": "The task is done.", "plan": "", "commands": [], "task_complete": true}'
        return json.dumps({"analysis": "", "plan": "", "commands": [{"keystrokes": cmd + "\n", "duration": 0.1}],
                           "task_complete": False})
    return "TASK COMPLETE" if cmd is None else f"```bash\n{cmd}\n```"


def example_turns(fmt: str, examples: list[Example]) -> list[tuple[str, str]]:
    """Worked examples as (role, text) chat turns: task, reply, output, ..., done."""
    turns = []
    for ex in examples:
        turns.append(("user", TASK_TEMPLATE.format(instruction=ex.instruction, workdir="/app")))
        for cmd, output in ex.steps:
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
