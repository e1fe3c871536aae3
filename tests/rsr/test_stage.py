"""Recursive Self-Rewrite: leakage gates (with planted leaks), runbooks, review, cleaning, masked SFT,
and the stage end to end on the bundled model (resumable).  Run: pytest tests/rsr/test_stage.py
"""

import json
import re
import shutil

import pytest
import torch

from rsi_lite.harness.messages import Message
from rsi_lite.policy.model import Policy, PolicyConfig, prepare_model
from rsi_lite.rollout.trajectory import Trajectory
from rsi_lite.rsr.clean import build_example, clean_turns
from rsi_lite.rsr.config import RSRConfig
from rsi_lite.rsr.leakage import find_leaks
from rsi_lite.rsr.review import review
from rsi_lite.rsr.runbook import extractive_runbook, parse_runbook, render, validate
from rsi_lite.rsr.sft import SFTConfig, masked_nll, train_sft
from rsi_lite.rsr.stage import accept, run_rsr, runbooks_of, select_sources
from rsi_lite.rundir import config_file
from rsi_lite.tasks import find_tasks, load_task

from ..conftest import TASKS, scripted_trajectory

CSV_TASK = "core-011-data_csv-easy"  # expected value '6' lives only in its tests


@pytest.fixture(scope="module")
def csv_task():
    return load_task(TASKS / "core" / CSV_TASK)


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer

    t = AutoTokenizer.from_pretrained(str(prepare_model()))
    t.pad_token = t.eos_token
    return t


# ---------------------------------------------------------------- leakage and review

def test_a_clean_runbook_passes_the_gates(csv_task):
    book = {"milestones": ["Use `tail` and `wc` on /app/violet_granite.csv to produce /app/pebble.txt"],
            "checks": ["Look at /app/pebble.txt with `cat` before finishing"], "pitfalls": []}
    assert find_leaks(render(book), csv_task) == []
    assert review(book, csv_task).approved


@pytest.mark.parametrize("planted, kind", [
    ("Write 6 to /app/pebble.txt", "test_value"),  # the expected count, which only the tests hold
    ("def test_value_correct(): assert read('pebble.txt').strip()", "test_text"),  # the test file's words
    ("tail -n +2 violet_granite.csv | wc -l > pebble.txt", "solution_line"),
    ("```bash\nwc -l violet_granite.csv\n```", "script"),
])
def test_planted_leaks_are_caught(csv_task, planted, kind):
    book = {"milestones": [planted], "checks": [], "pitfalls": []}
    leaks = find_leaks(render(book), csv_task)
    assert any(x.startswith(kind) for x in leaks), leaks
    verdict = review(book, csv_task)
    assert not verdict.approved and any(kind in r for r in verdict.reasons)


def test_review_rejects_bad_schema_and_foreign_artifacts(csv_task):
    assert not review({"milestones": []}, csv_task).approved
    assert not review({"milestones": ["ok"], "extra": 1}, csv_task).approved
    v = review({"milestones": ["Use `cp` on /app/somewhere_else.csv"]}, csv_task)
    assert not v.approved and "artifacts" in v.reasons[0]


def test_review_accepts_a_file_the_instruction_names_inside_a_directory_it_names():
    task = load_task(TASKS / "core" / "core-003-file_ops-easy")  # the directory /app/topaz_dir, a file tide_border.log
    assert review({"milestones": ["Use `mkdir` and `touch` on /app/topaz_dir, /app/topaz_dir/tide_border.log"]},
                  task).approved
    for foreign in ("/app/topaz_dir/other.log", "/app/elsewhere/tide_border.log", "/app/topaz_dir/tide_border.log2"):
        v = review({"milestones": [f"Use `touch` on {foreign}"]}, task)
        assert not v.approved and "artifacts" in v.reasons[0], foreign


def test_validate_and_parse_tolerate_junk():
    assert validate({"milestones": ["a"], "checks": [], "pitfalls": []}) == []
    assert validate([]) and validate({"milestones": "a"}) and validate({"milestones": ["x" * 300]})
    assert parse_runbook('Sure! {"milestones": ["a"]} and {broken') == {"milestones": ["a"]}
    assert parse_runbook("no json {here") is None


# ---------------------------------------------------------------- the extractive planner

def _m(kind, content):
    return {"kind": kind, "role": "assistant" if kind == "action" else "user", "content": content}


def test_extractive_runbook_names_tools_files_checks_and_pitfalls():
    instruction = "Copy the file /app/a.txt to /app/b.txt."
    msgs = [_m("instruction", instruction),
            _m("action", "```bash\ncp /app/x.txt /app/b.txt\n```"),
            _m("observation", "cp: cannot stat '/app/x.txt': No such file or directory\n[exit code 1]"),
            _m("action", "```bash\ncp /app/a.txt /app/b.txt\n```"), _m("observation", "(no output)"),
            _m("action", "```bash\ncat /app/b.txt\n```"), _m("observation", "hello"),
            _m("action", "TASK COMPLETE")]
    book = extractive_runbook(instruction, msgs)
    assert validate(book) == []
    assert book["milestones"] == ["Use `cp` on /app/a.txt, /app/b.txt"]
    assert book["checks"] == ["Only read /app/b.txt with `cat` before finishing; do not write to it again"]
    assert book["pitfalls"][0].startswith("`cp` failed here (exit 1): cp: cannot stat")
    assert "cp /app/a.txt /app/b.txt" not in render(book)  # tools and files, never the command
    assert extractive_runbook(instruction, msgs[:1] + msgs[5:]) is None  # only inspected: nothing to teach
    # a sed expression is not a path, and a file counts as named only as a whole word of the instruction
    instruction = "In the file /app/notes.txt, replace every occurrence of the word 'planet' with 'indigo'."
    book = extractive_runbook(instruction, [_m("instruction", instruction),
                                            _m("action", "```bash\nsed -i 's/planet/indigo/g' /app/notes.txt\n```"),
                                            _m("observation", "(no output)")])
    assert book["milestones"] == ["Use `sed` on /app/notes.txt"]


def test_the_planners_read_json_actions_as_commands():
    """Episodes in Terminus 2's JSON format (scale_up's rewrite job samples them): the extractive planner finds
    their commands, and the model planner's transcript shows the commands typed, not the JSON around them."""
    from rsi_lite.rsr.runbook import transcript

    def act(*commands):
        return _m("action", json.dumps({"analysis": "a long analysis " * 20, "plan": "p",
                                        "commands": [{"keystrokes": c + "\n", "duration": 1} for c in commands],
                                        "task_complete": False}))

    instruction = "Copy the file /app/a.txt to /app/b.txt."
    msgs = [_m("instruction", instruction), act("cp /app/a.txt /app/b.txt"), _m("observation", "(no output)"),
            act("cat /app/b.txt"), _m("observation", "hello")]
    assert extractive_runbook(instruction, msgs) is None  # read as bash blocks: no command at all
    book = extractive_runbook(instruction, msgs, "json")
    assert book["milestones"] == ["Use `cp` on /app/a.txt, /app/b.txt"]
    shown = transcript(msgs, action_format="json")
    assert shown.splitlines()[:2] == ["$ cp /app/a.txt /app/b.txt", "(no output)"] and "analysis" not in shown
    assert transcript(msgs).startswith('$ {"analysis"')  # the bash view of the same episode: the raw reply


# ---------------------------------------------------------------- cleaning

def test_cleaning_drops_guidance_control_and_refused_actions_and_keeps_ids(tok):
    msgs = [Message("control", "Task: an example", as_role="user"),
            Message("control", "```bash\nls\n```", as_role="assistant"),
            Message("guidance", "Private notes: use tail and wc"),
            Message("instruction", "Task:\nCount rows."),
            Message("action", "I will count"),  # refused: a parse error
            Message("control", "Previous response had parsing errors"),
            Message("action", "```bash\ntail -n +2 /app/violet_granite.csv | wc -l > /app/pebble.txt\n```"),
            Message("control", "Phase 3/4 CHECK"),  # a phase prompt before the output still leaves it answered
            Message("observation", "(no output)"),
            Message("control", "Checks still failing: value_correct"),
            Message("action", "TASK COMPLETE")]
    traj = scripted_trajectory(tok, msgs)
    kept = [m["kind"] for m, _ in clean_turns(traj)]
    assert kept == ["instruction", "action", "observation", "action"]
    ex = build_example(tok, traj, "resolve")
    assert ex.retokenizes and ex.kind == "data_csv/easy: Count rows.", ex.kind  # the kind `RPRConfig.replay_by` groups by
    assert [m["kind"] for m in ex.messages] == kept
    text = tok.decode(ex.input_ids)
    assert "Private notes" not in text and "parsing errors" not in text and "Phase" not in text
    # the trained tokens are exactly the stored ids of the two kept actions
    stored = [traj.token_ids[a:b] for a, b in traj.turn_spans][1:]
    trained = [i for i, m in zip(ex.input_ids, ex.loss_mask) if m]
    assert trained == stored[0] + stored[1]
    # the system prompt is the plain harness's, the target the training is for
    assert "You are an AI agent working in a Linux terminal" in text


def test_accept_rejects_failures_and_quotes(tok, csv_task):
    book = {"milestones": ["Use `tail` and `wc` on /app/violet_granite.csv to count the data rows carefully"],
            "checks": [], "pitfalls": []}
    ok = scripted_trajectory(tok, [Message("instruction", "Task"), Message("action", "```bash\ntail -n +2 violet_granite.csv | wc -l > pebble.txt\n```")])
    assert accept(ok, book, csv_task) == ["leakage: solution_line: 'tail -n +2 violet_granite.csv | wc -l > pebble.txt'"]
    fine = scripted_trajectory(tok, [Message("instruction", "Task"), Message("action", "```bash\nwc -l < /app/violet_granite.csv\n```")])
    assert accept(fine, book, csv_task) == []
    quoting = scripted_trajectory(tok, [Message("instruction", "Task"), Message("action", "# to count the data rows carefully\nwc")])
    assert any("quotes the runbook" in r for r in accept(quoting, book, csv_task))
    failed = scripted_trajectory(tok, [Message("instruction", "Task"), Message("action", "ls")])
    failed.verifier = {"strict": 0}
    assert accept(failed, book, csv_task) == ["not a strict success"]


def test_each_re_solve_is_paired_with_its_own_runbook_by_id_in_any_order_or_subset(tok, csv_task):
    """The gate pairs a re-solve with the runbook it followed by the id the re-solve carries. Two runbooks of one
    task; each re-solve quotes runbook 1. Against its own runbook only the one that followed runbook 1 quotes it,
    whatever the order of the list or which re-solves are left in it (as a cut or filtered list has them)."""
    books = [{"milestones": [f"Count the data rows of the {w} file with a tool you trust"], "checks": [],
              "pitfalls": []} for w in ("first", "second")]
    rows = [{"id": i, "task": csv_task.name, "runbook": b} for i, b in enumerate(books)]
    resolves = []
    for rid in (0, 0, 1, 1):
        t = scripted_trajectory(tok, [Message("instruction", "Task"), Message("guidance", render(books[rid])),
                                      Message("action", "# the data rows of the second file with a tool\nwc")])
        t.meta["runbook"], t.seed = rid, len(resolves)
        resolves.append(t)
    quotes = lambda ts: [any("quotes the runbook" in r for r in accept(t, row["runbook"], csv_task))  # noqa: E731
                         for t, row in zip(ts, runbooks_of(ts, rows))]
    assert quotes(resolves) == [False, False, True, True]
    assert quotes(resolves[::-1]) == [True, True, False, False]
    assert quotes([resolves[1], resolves[3]]) == [False, True]
    assert quotes([resolves[2]]) == [True]
    old = Trajectory.from_json(resolves[2].to_json().replace('"meta": {"runbook": 1}', '"meta": {}'))
    assert not old.meta and runbooks_of([old, resolves[0]], rows) == [rows[1], rows[0]]  # by the guidance it shows
    with pytest.raises(ValueError, match="meta\\['runbook'\\] = 7"):
        runbooks_of([Trajectory.from_json(resolves[0].to_json().replace('"runbook": 0', '"runbook": 7'))], rows)
    assert [r["id"] for r in runbooks_of([Trajectory.from_json(t.to_json()) for t in resolves], rows)] == [0, 0, 1, 1]


def test_select_sources_keeps_strict_successes_fewest_turns_first(tok):
    a = scripted_trajectory(tok, [Message("instruction", "T"), Message("action", "x"), Message("observation", "o"), Message("action", "y")])
    b = scripted_trajectory(tok, [Message("instruction", "T"), Message("action", "z")])
    c = scripted_trajectory(tok, [Message("instruction", "T"), Message("action", "w")])
    c.verifier = {"strict": 0}
    assert select_sources([a, b, c], per_task=1) == [b]


def test_the_retry_pass_samples_only_unsolved_tasks_with_new_seeds_and_its_temperature(tok, tmp_path, monkeypatch):
    """Discovery's second pass goes to the tasks no first-pass episode solved; a finished pass is not rerun."""
    from rsi_lite.rollout.trajectory import read_trajectories
    from rsi_lite.rsr import stage

    tasks = [load_task(TASKS / "core" / n) for n in ("core-000-file_ops-easy", "core-005-text_processing-easy",
                                                      "core-011-data_csv-easy")]
    calls = []

    def engine(policy, jobs, rc, **kw):  # the first pass solves core-000 only (and only under exemplar)
        calls.append((rc.harness, rc.temperature, [(t.name, s) for t, s in jobs]))
        out = []
        for t, s in jobs:
            x = scripted_trajectory(tok, [Message("instruction", t.instruction), Message("action", "ls")], rc.harness, t.name)
            x.seed, x.verifier = s, {"strict": int(t.name == "core-000-file_ops-easy" and rc.harness == "exemplar")}
            out.append(x)
        return out

    monkeypatch.setattr(stage, "run_episodes", engine)
    cfg = RSRConfig(discovery_harnesses=["exemplar", "plain"], discovery_samples=2, retry_samples=1,
                    retry_temperature=0.9)
    cfg.rollout.temperature = 0.3
    out = tmp_path / "discovery.jsonl"
    found = stage.discover(None, tasks, cfg, out)
    unsolved = [("core-005-text_processing-easy", 2), ("core-011-data_csv-easy", 2)]
    assert [(h, temp) for h, temp, _ in calls] == [("exemplar", 0.3), ("plain", 0.3), ("exemplar", 0.9), ("plain", 0.9)]
    assert [jobs for _, _, jobs in calls[2:]] == [unsolved, unsolved]
    assert len(found) == 3 * 2 * 2 + 2 * 2 and len(read_trajectories(out)) == len(found)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["discovery.jsonl"]  # the per-harness parts are gone

    # resuming: a harness's part that is on disk is read, not run again
    out.unlink()
    stage.write_trajectories(found[:6], tmp_path / "discovery-exemplar.jsonl")
    calls.clear()
    assert len(stage.discover(None, tasks, cfg, out)) == len(found)
    assert [(h, temp) for h, temp, _ in calls] == [("plain", 0.3), ("exemplar", 0.9), ("plain", 0.9)]


def _episode(tok, task, strict: int, *commands):
    """A plain-harness episode of `task` that ran `commands`, one per turn, then said TASK COMPLETE."""
    msgs = [Message("instruction", task.instruction)]
    for c in commands:
        msgs += [Message("action", f"```bash\n{c}\n```"), Message("observation", "(no output)")]
    t = scripted_trajectory(tok, msgs + [Message("action", "TASK COMPLETE")], "plain", task.name)
    t.verifier = {"strict": strict}
    return t


def test_a_failed_resolve_keeps_its_first_actions_when_they_pass_replayed(tok, bwrap_ok):
    """The model solves the task, then overwrites the result: replayed action by action, the first action
    passes, so the episode is cut after it; the clean example keeps that action and nothing after."""
    from rsi_lite.rsr.prefix import cut_after, passing_prefix, passing_prefixes

    task = load_task(TASKS / "core" / "core-000-file_ops-easy")  # copy robin_coral.txt to flint_prism.txt
    good, bad = "cp /app/robin_coral.txt /app/flint_prism.txt", "echo oops > /app/flint_prism.txt"
    clobbered, never = _episode(tok, task, 0, "ls /app", good, bad), _episode(tok, task, 0, "ls /app", bad)
    assert passing_prefix(clobbered, task) == 2 and passing_prefix(never, task) is None
    assert passing_prefixes([never, clobbered]) == {"1": 2}

    cut = cut_after(clobbered, 2)
    assert [m["content"] for m in cut.messages if m["kind"] == "action"] == [f"```bash\n{c}\n```" for c in ("ls /app", good)]
    assert cut.verifier["strict"] == 1 and cut.verifier["prefix_of"] == 4 and cut.turns == 2
    assert cut.token_ids == clobbered.token_ids[:cut.turn_spans[-1][1]] and cut.turn_spans == clobbered.turn_spans[:2]
    ex = build_example(tok, cut, "resolve")
    assert ex.retokenizes and good in tok.decode([i for i, m in zip(ex.input_ids, ex.loss_mask) if m])
    assert bad not in tok.decode(ex.input_ids)


def test_a_success_that_writes_after_it_passes_is_cut_where_it_first_passed(tok, bwrap_ok):
    """A success whose later action rewrites a file the checks do not read is cut after its passing action
    (`trim_after_pass`); a success that only looks afterwards, and any success without `trim`, stay whole."""
    from rsi_lite.rsr.prefix import passing_prefix, passing_prefixes

    task = load_task(TASKS / "core" / "core-000-file_ops-easy")  # copy robin_coral.txt to flint_prism.txt
    good = "cp /app/robin_coral.txt /app/flint_prism.txt"
    looked = _episode(tok, task, 1, good, "cat /app/flint_prism.txt")
    wrote = _episode(tok, task, 1, good, "echo junk > /app/notes.txt", "cat /app/flint_prism.txt")
    chmod = _episode(tok, task, 1, "ls /app", good, "chmod 600 /app/robin_coral.txt")
    assert passing_prefix(looked, task, trim=True) is None
    assert passing_prefix(wrote, task, trim=True) == 1 and passing_prefix(chmod, task, trim=True) == 2
    assert passing_prefix(wrote, task) is None  # successes are left alone unless asked
    assert passing_prefixes([looked, wrote, chmod], failed=False, trim=True) == {"1": 1, "2": 2}
    assert passing_prefixes([looked, wrote, chmod]) == {}


# ---------------------------------------------------------------- masked SFT

def test_masked_nll_matches_cross_entropy_on_the_masked_tokens():
    torch.manual_seed(0)
    logits, ids = torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))
    mask = torch.tensor([[0, 0, 1, 1, 0], [0, 1, 0, 0, 1]])
    want = []
    for b in range(2):
        for t in range(1, 5):
            if mask[b, t]:
                want.append(torch.nn.functional.cross_entropy(logits[b, t - 1][None], ids[b, t][None]))
    assert torch.allclose(masked_nll(logits, ids, mask), torch.stack(want).mean())


@pytest.fixture
def two_adapter_policy(tok):
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2)
    lora = dict(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    model = get_peft_model(LlamaForCausalLM(cfg), LoraConfig(**lora), adapter_name="actor")
    model.add_adapter("critic", LoraConfig(**lora))
    for n, p in model.named_parameters():  # B starts at zero; make every adapter non-trivial
        if "lora_B" in n:
            torch.nn.init.normal_(p, std=0.02)
    return Policy(model, tok, PolicyConfig(quantization="lora"), ["actor", "critic"])


def test_sft_trains_only_the_actor_and_lowers_the_loss(tok, two_adapter_policy):
    pol = two_adapter_policy
    before = {n: p.detach().clone() for n, p in pol.model.named_parameters()}
    msgs = [Message("instruction", "Task:\nCount rows."), Message("action", "```bash\nwc -l < /app/a.csv\n```")]
    ex = build_example(tok, scripted_trajectory(tok, msgs), "resolve")
    summary = train_sft(pol, [ex] * 4, SFTConfig(epochs=6, lr=1e-2, batch_size=2, warmup_steps=1))
    assert summary["last_loss"] < summary["first_loss"]
    for n, p in pol.model.named_parameters():
        changed = not torch.equal(p.detach(), before[n])
        assert changed == ("lora_" in n and ".actor." in n), n


# ---------------------------------------------------------------- the stage, end to end

def test_rsr_stage_end_to_end_and_resumable(tmp_path, bwrap_ok):
    """The bundled model solves the copy task under the exemplar harness (greedy), so the funnel is non-empty."""
    pool = tmp_path / "pool"
    src = next(t for t in find_tasks(TASKS / "core") if t.name == "core-000-file_ops-easy")
    shutil.copytree(src.path, pool / src.name)
    cfg = RSRConfig(pool=str(pool), discovery_harnesses=["exemplar"], discovery_samples=1, runbooks_per_success=1,
                    resolves_per_runbook=2, sft=SFTConfig(epochs=1))
    cfg.rollout.temperature, cfg.rollout.max_turns = 0.0, 2
    run = tmp_path / "run"
    funnel = run_rsr(run, 1, cfg)
    d = run / "rsr-1"
    assert funnel["source_successes"] == 1 and funnel["model_planner"]["sampled"] == 1
    assert funnel["runbooks_by_planner"]["extractive"] == 1
    assert funnel["approved"] >= 1 and funnel["resolves"] == 2 * funnel["approved"]
    assert funnel["accepted"] >= 1 and funnel["examples"] >= 1 and funnel["training_tokens"] > 0
    assert (d / "checkpoint" / "adapter_config.json").is_file() and (d / "DONE").is_file()
    ex = json.loads((d / "dataset.jsonl").read_text().splitlines()[0])
    assert ex["retokenizes"] and "guidance" not in {m["kind"] for m in ex["messages"]}
    # resume: as if killed after the re-solves; finished steps are not redone
    stamp = (d / "discovery.jsonl").stat().st_mtime_ns
    for name in ("dataset.jsonl", "DONE", "funnel.json"):
        (d / name).unlink()
    shutil.rmtree(d / "checkpoint")
    again = run_rsr(run, 1)
    assert (d / "discovery.jsonl").stat().st_mtime_ns == stamp
    assert {k: again[k] for k in ("source_successes", "approved", "accepted", "examples")} == \
        {k: funnel[k] for k in ("source_successes", "approved", "accepted", "examples")}
    with pytest.raises(ValueError, match="another config"):
        run_rsr(run, 1, RSRConfig(pool=str(pool)))


def test_pool_difficulty_and_family_filters(tmp_path):
    from rsi_lite.tasks.suites import pool_tasks

    for name in ("core-000-file_ops-easy", "core-004-file_ops-medium", "core-005-text_processing-easy"):
        shutil.copytree(TASKS / "core" / name, tmp_path / "pool" / name)
    cfg = RSRConfig(pool=str(tmp_path / "pool"), pool_difficulty=["easy"])
    assert [t.name for t in pool_tasks(tmp_path, cfg)] == ["core-000-file_ops-easy", "core-005-text_processing-easy"]
    cfg.pool_families = ["file_ops"]
    assert [t.name for t in pool_tasks(tmp_path, cfg)] == ["core-000-file_ops-easy"]
    cfg.pool_difficulty = []
    assert len(pool_tasks(tmp_path, cfg)) == 2


def test_a_stage_config_names_paths_by_the_files_not_the_spelling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    d = tmp_path / "run" / "rsr-1"
    d.mkdir(parents=True)
    config_file(d, RSRConfig(init="run/rpr-1/actor", pool="run/pool"), RSRConfig)  # started with relative paths
    again = config_file(d, RSRConfig(init=str(tmp_path / "run/rpr-1/actor"), pool=str(tmp_path / "run/pool")),
                        RSRConfig)  # resumed with absolute ones: the same stage
    assert again.init == "run/rpr-1/actor"
    with pytest.raises(ValueError, match=r"rsr-1/config.json.*\(init differ\)"):
        config_file(d, RSRConfig(init="run/rsr-1/checkpoint", pool="run/pool"), RSRConfig)


def test_the_shadow_gate_keeps_a_hard_coded_re_solve_out_of_the_sft_set(tmp_path, tok, bwrap_ok):
    """A scripted stage (its discovery, runbook, review and two re-solves on disk, as a resumed run finds them):
    the honest re-solve computes the answer, the planted one writes the original's answer verbatim. Both pass
    the task; only the honest one passes its shadow twin, and only it reaches the SFT set. The funnel counts
    the flag."""
    from rsi_lite.harness.messages import Message
    from rsi_lite.records import write_jsonl_atomic
    from rsi_lite.rollout.trajectory import write_trajectories
    from rsi_lite.verify.shadow import hard_coded_answer

    from ..conftest import scripted_trajectory

    name = "core-010-data_csv-easy"
    task = load_task(TASKS / "core" / name)
    pool = tmp_path / "pool"
    shutil.copytree(task.path, pool / name)
    # computed from the file, in other words than the reference solution (which the leakage gate rejects)
    csv, who, out = re.match(r"In /app/(\S+), find the \w+ of (\w+) and write just that number to /app/(\S+)\.",
                             task.instruction).groups()
    honest = f"awk -F, -v who={who} '$1 == who {{print $3}}' {csv} > {out}"
    planted = hard_coded_answer(task, backend="bwrap")

    def episode(cmd):
        t = scripted_trajectory(tok, [Message("instruction", task.instruction), Message("action", f"```bash\n{cmd}\n```")],
                                "plain", name, "data_csv")
        t.task_path = str(pool / name)
        return t

    d = tmp_path / "run" / "rsr-1"
    d.mkdir(parents=True)
    write_trajectories([episode(honest)], d / "discovery.jsonl")
    write_trajectories([episode(honest)], d / "successes.jsonl")
    book = {"milestones": ["read the file and write the answer it asks for"], "checks": [], "pitfalls": []}
    write_jsonl_atomic(d / "runbooks.jsonl", [{"id": 0, "task": name, "task_path": str(pool / name), "source": 0,
                                               "source_harness": "plain", "planner": "extractive", "runbook": book,
                                               "raw": ""}])
    (d / "model_planner.json").write_text('{"sampled": 0, "valid": 0}')
    write_jsonl_atomic(d / "reviews.jsonl", [{"id": 0, "approved": True, "reasons": []}])
    resolves = [episode(planted), episode(honest)]
    for t in resolves:
        t.meta["runbook"] = 0  # as the re-solve step records it
    write_trajectories(resolves, d / "resolves.jsonl")
    cfg = RSRConfig(pool=str(pool), resolves_per_runbook=2, keep_passing_prefix=False, trim_after_pass=False,
                    max_examples_per_task=4)
    run_rsr(tmp_path / "run", 1, cfg, until="dataset")
    assert json.loads((d / "flags.json").read_text()) == {"0": ["input_specific"]}
    rows = [json.loads(x) for x in (d / "dataset.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and honest in rows[0]["messages"][-1]["content"]


def test_the_stage_loads_through_load_and_refuses_to_fine_tune_a_vllm_served_policy(tmp_path, tok):
    """A stage resumed with every file up to its dataset on disk: the SFT step is what is left. The policy comes
    from `load(init, model)` (scale_up's rewrite job gives one served by vLLM, which only generates); such a policy
    is refused there, before anything is trained or saved."""
    import shutil

    from rsi_lite.policy.gen.vllm_engine import VLLMPolicy

    pool = tmp_path / "pool"
    shutil.copytree(TASKS / "core" / CSV_TASK, pool / CSV_TASK)
    d = tmp_path / "run" / "rsr-1"
    d.mkdir(parents=True)
    for name in ("discovery", "successes", "runbooks", "reviews", "resolves", "dataset"):
        (d / f"{name}.jsonl").write_text("")
    for name, doc in (("model_planner", {"sampled": 0, "valid": 0}), ("prefixes", {}), ("flags", {}),
                      ("dataset_meta", {"retokenize_failures": 0})):
        (d / f"{name}.json").write_text(json.dumps(doc))
    calls = []

    def load(init, model):
        calls.append((init, model))
        return VLLMPolicy(tokenizer=tok, engine=None)

    with pytest.raises(ValueError, match=r"rsr-1: the SFT step needs a trainable model"):
        run_rsr(tmp_path / "run", 1, RSRConfig(pool=str(pool)), load=load)
    assert calls == [("base", "smollm2-135m")] and not (d / "checkpoint").exists()


def test_the_planner_and_the_reviewer_generate_on_the_stages_backend(tok):
    """The model planner and reviewer ask `dispatch.complete` for the stage's rollout backend, not always 'auto'
    (on a GPU, 'auto' would pick the native engine the rollouts avoid there): a backend the policy cannot be
    served on is refused by the dispatch, so the setting reaches it."""
    from rsi_lite.policy.gen.vllm_engine import VLLMPolicy
    from rsi_lite.rsr.review import model_review
    from rsi_lite.rsr.runbook import model_runbooks

    served = VLLMPolicy(tokenizer=tok, engine=None)
    with pytest.raises(ValueError, match=r"generation_backend 'transformers': this policy is served by vLLM"):
        model_runbooks(served, [("Count the lines of a.txt.", [])], k=1, backend="transformers")
    book = {"milestones": ["count the lines"], "checks": [], "pitfalls": []}
    with pytest.raises(ValueError, match=r"generation_backend 'native': this policy is served by vLLM"):
        model_review(served, "Count the lines of a.txt.", book, backend="native")
