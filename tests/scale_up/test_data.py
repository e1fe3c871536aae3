"""Tasks as verl's training rows (`scale_up.data`): written to parquet, read back by verl's own `RLHFDataset`
and collated by its `collate_fn`, each row names the agent loop and a task the kit loads, and the repeated
rows of one task get different episode seeds.

Run (verl's environment):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_data.py
"""

import pytest

pytest.importorskip("verl")

from .conftest import REPO  # noqa: E402

CORE = REPO / "tasks_mini" / "core"


def test_verls_dataset_reads_the_rows_and_the_agent_loop_finds_the_tasks(tmp_path, target_model_dir):
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    from rsi_lite.tasks.task import find_tasks, load_task
    from scale_up.agent_loop import episode_seed, sample_key
    from scale_up.data import task_rows, write_parquet

    tasks = find_tasks(CORE)[:3]
    rows = [r for t in tasks for r in task_rows(t.path, samples=2)]
    path = write_parquet(rows, tmp_path / "train.parquet")
    ds = RLHFDataset(data_files=str(path), tokenizer=AutoTokenizer.from_pretrained(target_model_dir),
                     config=OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 8192,
                                              "return_raw_chat": True, "filter_overlong_prompts": False}))
    assert len(ds) == 6
    batch = collate_fn([ds[i] for i in range(len(ds))])
    assert list(batch["agent_name"]) == ["rsi_terminal"] * 6
    infos = list(batch["extra_info"])
    assert [load_task(i["task_path"]).name for i in infos] == [t.name for t in tasks for _ in range(2)]
    assert [i["sample"] for i in infos] == [0, 1] * 3
    assert batch["raw_prompt"][0][0]["content"] == tasks[0].instruction
    # each row's episodes, and with rollout.n = 2 each session of a row, get seeds of their own
    seeds = {episode_seed(0, i["task"], sample_key(i["sample"], session)) for i in infos for session in (0, 1)}
    assert len(seeds) == 12


def test_a_folder_without_tasks_is_refused(tmp_path):
    from scale_up.data import task_rows

    with pytest.raises(FileNotFoundError, match="no task"):
        task_rows(tmp_path)


def test_a_row_may_name_its_own_harness_for_discovery(tmp_path):
    from scale_up.agent_loop import RSIEpisodeConfig
    from scale_up.data import task_rows

    rows = task_rows(CORE / "core-000-file_ops-easy", harnesses=["plain", "state_machine", "verifier_feedback"])
    base = RSIEpisodeConfig(harness="plain", max_turns=7)
    got = [base.for_row(r["extra_info"]) for r in rows]
    assert [c.harness for c in got] == ["plain", "state_machine", "verifier_feedback"]
    assert {c.max_turns for c in got} == {7}
    assert base.for_row(task_rows(CORE / "core-000-file_ops-easy")[0]["extra_info"]) == base


def test_a_runs_task_rows_come_from_its_pool_split_as_the_kits_rpr_splits_it(tmp_path):
    """`write_run_tasks` (the cycle's `tasks` job): the pool generated once into RUN/pool, its warm-up and training
    parts as `rpr.batches.warmup_split` cuts them, the val suite beside; written again, the same rows and no temp
    file left; a warm-up as large as the pool refused before anything is written."""
    import pandas as pd

    from rsi_lite.rpr.batches import warmup_split
    from rsi_lite.rpr.config import RPRConfig
    from rsi_lite.tasks.task import find_tasks
    from scale_up.data import write_run_tasks

    run, rpr = tmp_path / "run", RPRConfig(warmup_tasks=2, seed=3)
    files = [run / "tasks" / f"{n}.parquet" for n in ("train", "warmup", "val")]
    out = write_run_tasks(run, *files, rpr, pool_size=6)
    assert {k: v["rows"] for k, v in out.items()} == {"train": 4, "warmup": 2, "val": 27}
    warm, train = warmup_split(rpr, find_tasks(run / "pool"))
    tables = [pd.read_parquet(f) for f in files]
    assert [i["task"] for i in tables[0]["extra_info"]] == [t.name for t in train]
    assert [i["task"] for i in tables[1]["extra_info"]] == [t.name for t in warm]
    assert {i["task"] for i in tables[2]["extra_info"]} == {t.name for t in find_tasks(REPO / "tasks_mini" / "val")}
    write_run_tasks(run, *files, rpr, pool_size=6)  # a resumed job: the same rows again
    assert all(pd.read_parquet(f).equals(t) for f, t in zip(files, tables))
    assert not list((run / "tasks").glob("*.tmp"))
    with pytest.raises(ValueError, match="pool_size 2, warmup_tasks 2"):
        write_run_tasks(tmp_path / "other", *files, rpr, pool_size=2)
    assert not (tmp_path / "other").exists()
