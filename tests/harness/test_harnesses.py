"""The four harnesses, driven by scripted replies (no model).  Run: pytest tests/harness/test_harnesses.py"""

from dataclasses import dataclass, field

import pytest

from rsi_lite.harness import strip_kinds
from rsi_lite.harness.harnesses import HARNESSES, HarnessState, cap_text, make_harness
from rsi_lite.harness.prompts import EXAMPLES, choose_examples
from rsi_lite.sandbox import make_sandbox
from rsi_lite.sandbox.base import CommandResult
from rsi_lite.tasks import find_tasks
from rsi_lite.tasks.audit import jaccard, shingles, task_text
from rsi_lite.tasks.task import EnvironmentSpec

from ..conftest import TASKS


@dataclass
class FakeTerminal:
    outputs: dict = field(default_factory=dict)
    ran: list = field(default_factory=list)

    def run(self, cmd, timeout):
        self.ran.append(cmd)
        return CommandResult(cmd, self.outputs.get(cmd, ""), 0 if cmd in self.outputs else 1)


@dataclass
class FakeReport:
    strict: int
    tests: list


def verify_failing(*names):
    return lambda: FakeReport(0, [{"name": f"test_outputs.py::test_{n}", "status": "failed"} for n in names])


def drive(harness, replies, terminal=None, verify=None):
    terminal = terminal or FakeTerminal()
    state, seen = HarnessState(), []
    for reply in replies:
        seen.append(harness.step(state, reply, terminal.run, verify or verify_failing("x")))
        if state.done:
            break
    return state, seen, terminal


def test_plain_runs_commands_and_shows_output():
    h = make_harness("plain")
    msgs = h.start("Make a file.")
    assert [m.kind for m in msgs] == ["instruction"] and "Make a file." in msgs[0].content
    state, seen, term = drive(h, ["```bash\nls\n```", "TASK COMPLETE"], FakeTerminal({"ls": "a.txt\n"}))
    assert term.ran == ["ls"] and seen[0][0].kind == "observation" and seen[0][0].content == "a.txt"
    assert state.done and state.finish_reason == "complete" and seen[1] == []


def test_exit_codes_and_empty_output_are_shown():
    state, seen, _ = drive(make_harness("plain"), ["```bash\nfalse\n```"])
    assert seen[0][0].content == "[exit code 1]"
    state, seen, _ = drive(make_harness("plain"), ["```bash\ntrue\n```"], FakeTerminal({"true": ""}))
    assert seen[0][0].content == "(no output)"


def test_parse_error_gets_a_correction_and_counts_a_turn():
    state, seen, term = drive(make_harness("plain", max_turns=2), ["I think we should list files", "still no block"])
    assert seen[0][0].kind == "control" and "parsing errors" in seen[0][0].content
    assert state.parse_errors == 2 and state.finish_reason == "max_turns" and not term.ran


def test_json_task_complete_must_be_confirmed_twice():
    h = make_harness("plain", action_format="json")
    done = '{"analysis": "", "plan": "", "commands": [], "task_complete": true}'
    state, seen, _ = drive(h, [done, done])
    assert "Are you sure" in seen[0][-1].content and state.finish_reason == "complete" and len(seen) == 2
    not_done = '{"analysis": "", "plan": "", "commands": [], "task_complete": false}'
    state, seen, _ = drive(h, [done, not_done, done])  # a "false" in between resets the confirmation
    assert not state.done and state.confirm_pending


def test_max_turns_ends_the_episode():
    state, seen, _ = drive(make_harness("plain", max_turns=3), ["```bash\nls\n```"] * 5)
    assert state.turn == 3 and state.finish_reason == "max_turns" and seen[-1] == []


def test_long_output_is_capped_head_and_tail():
    assert cap_text("a" * 10 + "b" * 10, 10) == "aaaaa\n[... 10 characters omitted ...]\nbbbbb"
    h = make_harness("plain", observation_chars=100)
    _, seen, _ = drive(h, ["```bash\nyes\n```"], FakeTerminal({"yes": "y\n" * 500}))
    assert len(seen[0][0].content) < 200


def test_exemplar_shows_worked_examples_as_earlier_turns():
    msgs = make_harness("exemplar").start("Do it.")
    kinds = [m.kind for m in msgs]
    assert kinds[-1] == "instruction" and set(kinds[:-1]) == {"control"}
    assert {m.role for m in msgs[:-1]} == {"user", "assistant"}
    assert sum(m.content.startswith("Task:") for m in msgs[:-1]) == 3
    assert [m.kind for m in strip_kinds(msgs)] == ["instruction"]


def test_exemplar_shows_the_examples_most_like_the_task_the_nearest_last():
    h = make_harness("exemplar")
    shown = [m.content for m in h.start("Count the lines of /app/x.log with the level WARN and write the number "
                                        "to /app/y.txt.") if m.content.startswith("Task:")]
    assert "/app/events.log" in shown[-2] and "grep -c" not in shown[-2]  # the nearest is the last example
    picks = {t.metadata.get("family"): choose_examples(t.instruction, 1)[0].instruction
             for t in find_tasks(TASKS / "core")}
    # each family's nearest example is one of its own operation, in its own wording, on other files
    assert picks["archives"].startswith("Extract the archive") and picks["config_edit"].startswith("Edit the config")
    assert picks["scripting"].startswith("Create an executable") and picks["log_analysis"].startswith("Count the lines")
    assert ".csv" in picks["data_csv"] and picks["python_fix"].startswith("The function")
    for t in find_tasks(TASKS / "core"):  # and each easy operation's nearest example is that operation
        for opening in ("Save the first", "Write the contents of", "Create the directory", "Copy the file",
                        "Count the data rows", "Count the lines"):
            if t.metadata.get("difficulty") == "easy" and t.instruction.startswith(opening):
                assert choose_examples(t.instruction, 1)[0].instruction.startswith(opening), t.name
    assert choose_examples("xyzzy plugh", 2) == EXAMPLES[:2][::-1]  # no shared word: the set's order


def test_among_equally_similar_examples_the_one_with_the_tasks_kinds_of_file_is_chosen():
    task = "Count the data rows of /app/hill.csv (do not count the header line) and write the number to /app/n.txt."
    shown = [ex.instruction for ex in choose_examples(task, 3)]
    # a CSV lookup and the word count of a .txt share as much (idf-weighted) with it; the CSV one goes in
    assert ".csv" in shown[0] and "poem.txt" not in " ".join(shown) and shown[-1].startswith("Count the data rows")


def test_exemplars_share_no_task_with_the_suites():
    examples = [shingles(ex.instruction + " " + " ".join(c for c, _ in ex.steps)) for ex in EXAMPLES]
    for t in find_tasks(TASKS):
        s = shingles(task_text(t))
        assert max(jaccard(s, e) for e in examples) < 0.2, t.name


def test_every_worked_example_shows_the_output_its_commands_really_print(bwrap_ok):
    for ex in EXAMPLES:
        with make_sandbox(EnvironmentSpec(), backend="bwrap") as box:
            assert box.exec(ex.setup or "true").exit_code == 0, ex.instruction
            for cmd, shown in ex.steps:
                result = box.exec(cmd)
                assert (result.exit_code, result.output.strip("\n")) == (0, shown), (ex.instruction, cmd)


def test_state_machine_cycles_phases():
    h = make_harness("state_machine")
    start = h.start("x")
    assert "INSPECT" in start[-2].content and start[-1].kind == "instruction"  # the phase comes first
    _, seen, _ = drive(h, ["```bash\nls\n```"] * 5)
    assert all(s[-1].kind == "observation" for s in seen if s)
    phases = [s[0].content.split(":")[0] for s in seen if s]
    assert phases == ["Phase 2/4 ACT", "Phase 3/4 CHECK", "Phase 4/4 FINISH", "Phase 2/4 ACT", "Phase 3/4 CHECK"]


def test_verifier_feedback_names_failing_checks_and_ends_when_all_pass():
    h = make_harness("verifier_feedback")
    _, seen, _ = drive(h, ["```bash\nls\n```"], verify=verify_failing("file_exists", "content_matches"))
    assert seen[0][-1].kind == "control" and "file_exists, content_matches" in seen[0][-1].content
    assert "def test_" not in seen[0][-1].content
    state, seen, _ = drive(h, ["```bash\nls\n```"], verify=lambda: FakeReport(1, []))
    assert state.finish_reason == "verified"


def test_unknown_harness_and_format():
    assert set(HARNESSES) == {"plain", "exemplar", "state_machine", "verifier_feedback"}
    with pytest.raises(ValueError):
        make_harness("magic")
    with pytest.raises(ValueError):
        make_harness("plain", action_format="xml")


def test_state_machine_refuses_completion_before_the_finish_phase():
    h = make_harness("state_machine")
    state, seen, _ = drive(h, ["TASK COMPLETE", "```bash\nls\n```", "```bash\ncat a\n```", "TASK COMPLETE"])
    assert seen[0][0].content.startswith("Phase 2/4") and "Not yet" in seen[0][1].content
    assert state.done and state.finish_reason == "complete" and state.turn == 4


@pytest.mark.parametrize("name", list(HARNESSES))
def test_guidance_is_its_own_kind_before_the_instruction(name):
    msgs = make_harness(name).start("Copy a to b.", guidance="Private notes: use cp")
    kinds = [m.kind for m in msgs]
    k = kinds.index("instruction")
    assert kinds.count("guidance") == 1 and kinds.index("guidance") < k == len(kinds) - 1  # the task is the last word
    assert [m.kind for m in strip_kinds(msgs)] == ["instruction"]
    assert "guidance" not in [m.kind for m in make_harness(name).start("Copy a to b.")]
