"""Shadow twins of generated tasks: same instruction, other hidden data; the original stays byte for byte.
Run: pytest tests/test_shadow.py
"""

import random

import pytest

from rsi_lite.tasks import load_task
from rsi_lite.tasks.families import FAMILIES, TRAIN_FAMILIES
from rsi_lite.tasks.families._common import TaskRandom, hidden, shadowed
from rsi_lite.tasks.shadow import check_shadow, hardcoded_commands, outputs_of_reference, shadow_specs, spec_for
from rsi_lite.tasks.suites import make_spec, suite_specs
from rsi_lite.verify import attempt

from .conftest import TASKS


def test_a_taskrandom_original_is_the_plain_random_stream_and_a_shadow_keeps_the_stated_draws():
    plain, original, twin = random.Random("s/1"), TaskRandom("s/1"), TaskRandom("s/1", shadow=True)
    draws = []
    for rng in (plain, original, twin):
        stated = rng.randint(0, 10 ** 6)
        secret = hidden(rng, lambda r: r.sample(range(1000), 5))
        kept = shadowed(rng, [stated], lambda r: [r.random()])
        draws.append((stated, secret, kept, rng.randint(0, 10 ** 6)))  # the stream after them: stated again
    assert draws[0] == draws[1]
    assert draws[2][0] == draws[0][0] and draws[2][3] == draws[0][3]  # what is stated is the original's
    assert draws[2][1] != draws[0][1] and draws[2][2] != draws[0][2]  # what is hidden is not


def test_generating_through_taskrandom_leaves_every_checked_in_task_as_it_is():
    for suite in ("core", "hard", "swr", "lhtb", "multi"):
        for name, seed, spec in suite_specs(suite):
            task = load_task(TASKS / suite / name)
            again = spec_for(suite, seed, task.family, task.difficulty)
            assert again.fingerprint() == spec.fingerprint() and again.instruction == task.instruction.rstrip("\n")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_has_twins_with_the_instruction_and_other_hidden_data(family):
    """Over 30 seeds and every difficulty: a twin's instruction is the original's; at least a third of the twins
    differ in their files or checks (the others' instructions state everything: python_fix's fixed bug table)."""
    levels = ["long"] if family == "project_repair" else ["easy", "medium", "hard"]
    differ = 0
    for i in range(30):
        for d in levels:
            a = make_spec(TaskRandom(f"t/{i}"), family, d)
            b = make_spec(TaskRandom(f"t/{i}", shadow=True), family, d)
            assert a.instruction == b.instruction, (family, d, i)
            differ += a.files != b.files or [c.body for c in a.checks] != [c.body for c in b.checks]
    assert differ >= len(levels) * 30 // 3, (family, differ)


def test_pool_tasks_have_twins_too(tmp_path):
    from rsi_lite.tasks.suites import write_pool

    for path in write_pool(tmp_path / "pool", 12):
        original, twin = shadow_specs(load_task(path))
        assert original.instruction == twin.instruction


def test_a_copied_answer_fails_the_twin_and_a_computed_one_passes(bwrap_ok):
    """A data task (count the rows): the original's answer file copied in fails the twin; the twin's own
    reference passes it. `tasks check` runs this for every generated task."""
    task = load_task(TASKS / "core" / "core-010-data_csv-easy")
    r = check_shadow(task, backend="bwrap")
    assert r.ok and r.differs and r.reference.strict == 1 and r.hardcoded.strict == 0, r.reason
    # the same copy passes the original itself: it is the right answer there, and only there
    mine = outputs_of_reference(task, backend="bwrap")
    assert attempt(task, hardcoded_commands(mine, sorted(mine.made), task.environment.workdir),
                   backend="bwrap")[1].strict == 1


def test_a_task_whose_answer_is_stated_is_said_so(bwrap_ok):
    task = load_task(TASKS / "core" / "core-020-scripting-easy")
    r = check_shadow(task, backend="bwrap")
    assert r.ok and not r.differs and "no hidden data" in r.reason


def test_a_task_no_generator_made_has_no_twin(tmp_path):
    from .conftest import write_harbor_task

    root = write_harbor_task(tmp_path / "x", dockerfile="FROM ubuntu\nWORKDIR /app\n", files={},
                             test_py="def test_x(): pass\n", solve="true")
    r = check_shadow(load_task(root))
    assert not r.ok and "no generator metadata" in r.reason


def test_training_families_all_have_a_kind_whose_copied_answer_fails(bwrap_ok):
    """Program families (scripting, python_fix) are checked by running the program on hidden inputs the twin
    redraws; every other training family has checked-in tasks whose copied answer fails the twin."""
    from rsi_lite.tasks import find_tasks

    seen = {}
    for t in find_tasks(TASKS / "core") + find_tasks(TASKS / "hard"):
        if t.family in seen or t.family in ("scripting", "python_fix"):
            continue
        r = check_shadow(t, backend="bwrap")
        assert r.ok, (t.name, r.reason)
        if r.hardcoded is not None and r.hardcoded.strict == 0:
            seen[t.family] = t.name
    assert set(seen) == set(TRAIN_FAMILIES) - {"scripting", "python_fix"}, seen
