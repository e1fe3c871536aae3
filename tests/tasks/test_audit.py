"""The overlap audit between the eval suites and the training pool.  Run: pytest tests/tasks/test_audit.py"""

import shutil

from rsi_lite.tasks import find_tasks
from rsi_lite.tasks.audit import overlap_audit
from rsi_lite.tasks.suites import write_pool

from ..conftest import TASKS


def test_no_eval_task_leaks_into_the_pool(tmp_path):
    write_pool(tmp_path / "pool", 360)
    report = overlap_audit(find_tasks(TASKS), find_tasks(tmp_path / "pool"))
    assert report.eval_tasks >= 184 and report.pool_tasks == 360
    assert report.leaks == [], report.summary()
    assert 0 < report.same_family_baseline < report.threshold


def test_a_planted_copy_and_a_near_copy_are_caught(tmp_path):
    victim = sorted((TASKS / "hard").iterdir())[5]
    for kind in ("copy", "near"):
        pool = tmp_path / kind
        write_pool(pool, 30)
        shutil.copytree(victim, pool / f"planted-{kind}")
        if kind == "near":  # the same instance with one value changed
            inst = pool / f"planted-{kind}" / "instruction.md"
            inst.write_text(inst.read_text().replace("/app/", "/srv/", 1))
        report = overlap_audit(find_tasks(TASKS / "hard"), find_tasks(pool))
        leak = {x.eval_task: x for x in report.leaks}[victim.name]
        assert leak.pool_task == f"planted-{kind}"
        assert (leak.similarity == 1.0) == (kind == "copy")
