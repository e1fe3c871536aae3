"""Task generation, the checked-in suites and the training pool.  Run: pytest tests/tasks/test_tasks.py"""

import filecmp
import random
from collections import Counter

import pytest

from rsi_lite.tasks import find_tasks, load_task
from rsi_lite.tasks.families import DIFFICULTIES, FAMILIES, TRAIN_FAMILIES
from rsi_lite.tasks.suites import SUITES, eval_fingerprints, pool_specs, suite_specs, write_suite

from ..conftest import TASKS

MINIMUM = {"core": 40, "hard": 30, "multi": 24, "extreme": 20, "swr": 20, "lhtb": 10, "val": 20}


def _same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


@pytest.mark.parametrize("suite", SUITES)
def test_checked_in_suite_matches_its_generator(suite, tmp_path):
    write_suite(suite, tmp_path)
    assert _same_tree(tmp_path / suite, TASKS / suite), f"tasks_mini/{suite} is stale: run `rsi-lite tasks generate`"


def test_suite_sizes_and_families():
    tasks = find_tasks(TASKS)
    per_suite = Counter(t.suite for t in tasks)
    for suite, n in MINIMUM.items():
        assert per_suite[suite] >= n, (suite, per_suite[suite])
    train_fams = {t.family for t in tasks if t.suite in ("core", "hard", "val")}
    assert len(train_fams) >= 8
    assert {t.family for t in tasks if t.suite == "swr"} == {"fs_meta"}


def test_swr_family_never_in_training_pool():
    fams = Counter(spec.family for _, _, spec in pool_specs(360))
    assert "fs_meta" not in fams and "project_repair" not in fams
    assert set(TRAIN_FAMILIES) <= set(fams)


def test_pool_is_large_and_excludes_every_eval_instance():
    evals = eval_fingerprints()
    pool = list(pool_specs(360, exclude=evals))
    assert len(pool) >= 300
    assert not {spec.fingerprint() for _, _, spec in pool} & evals
    assert all(seed.startswith("train/") for _, seed, _ in pool)
    eval_seeds = {seed for s in SUITES for _, seed, _ in suite_specs(s)}
    assert not eval_seeds & {seed for _, seed, _ in pool}


def test_pool_skips_a_candidate_that_equals_an_eval_task():
    first = next(pool_specs(1))
    excluded = list(pool_specs(3, exclude={first[2].fingerprint()}))
    assert first[2].fingerprint() not in {s.fingerprint() for _, _, s in excluded}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_generates_deterministically_with_several_checks(family):
    levels = ["long"] if family == "project_repair" else list(DIFFICULTIES)
    for level in levels:
        for seed in range(5):
            a = FAMILIES[family].generate(random.Random(f"t/{seed}"), level)
            b = FAMILIES[family].generate(random.Random(f"t/{seed}"), level)
            assert a.fingerprint() == b.fingerprint()
            assert len(a.checks) >= 2, (family, level)
            assert a.instruction and a.solution


def test_task_layout_and_metadata():
    t = load_task(next((TASKS / "core").iterdir()))
    for rel in ("instruction.md", "task.toml", "environment/Dockerfile", "tests/test.sh", "tests/test_outputs.py", "solution/solve.sh"):
        assert (t.path / rel).is_file(), rel
    assert {"family", "difficulty", "suite"} <= set(t.metadata)
    assert t.agent_timeout_sec > 0 and t.verifier_timeout_sec > 0
    test_sh = (t.tests_dir / "test.sh").read_text()
    assert "--ctrf" in test_sh and "/logs/verifier" in test_sh and "reward.txt" in test_sh
    # one test per check
    src = (t.tests_dir / "test_outputs.py").read_text()
    assert src.count("\ndef test_") == t.metadata["checks"]


def test_core_is_mostly_one_command_tasks():
    # the bundled 135M model can solve one-command tasks with help: core must hold many of them
    tasks = find_tasks(TASKS / "core")
    assert sum(t.difficulty == "easy" for t in tasks) >= 0.7 * len(tasks)
    body = [(t.solution_dir / "solve.sh").read_text().strip().splitlines()[4:] for t in tasks]
    assert sum(len(b) == 1 for b in body) >= 0.5 * len(tasks)
