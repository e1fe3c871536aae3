"""`rsi_lite.rpr.replay` and `RPRConfig.replay`: the self-rewrite examples a joint update keeps the actor near.
Run: pytest tests/rpr/test_replay.py
"""

import json
from pathlib import Path

import pytest
import torch

from rsi_lite.rpr.config import RPRConfig
from rsi_lite.rpr.replay import Replay, replay_path
from rsi_lite.rpr.stage import make_optimizers
from rsi_lite.rpr.update import update

from .test_stage import fake_trajectories, tiny_actor_critic


def _dataset(path, n=5, length=24, seed=0):
    g = torch.Generator().manual_seed(seed)
    rows = [{"task": f"t{i}", "input_ids": torch.randint(5, 1000, (length,), generator=g).tolist(),
             "loss_mask": [0] * 12 + [1] * (length - 12)} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_dataset_defaults_to_the_one_beside_the_incoming_actor_and_bad_rows_are_named(tmp_path):
    assert replay_path(RPRConfig(init="runs/x/rsr-1/checkpoint")) == Path("runs/x/rsr-1/dataset.jsonl")
    assert str(replay_path(RPRConfig(init="a/checkpoint", replay_from="b/dataset.jsonl"))) == "b/dataset.jsonl"
    with pytest.raises(FileNotFoundError, match="nothere.jsonl: missing"):
        Replay.load(tmp_path / "nothere.jsonl", 4)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"input_ids": [1, 2, 3], "loss_mask": [1, 1, 1]}) + "\n"
                   + json.dumps({"input_ids": [1, 2], "loss_mask": [1]}) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl, line 2: 'input_ids' and 'loss_mask'"):
        Replay.load(bad, 4)
    with pytest.raises(ValueError, match="replay / replay_batch"):
        RPRConfig(replay=-1.0)


def test_draws_are_fixed_by_seed_and_step_and_cover_every_example_before_repeating(tmp_path):
    r = Replay.load(_dataset(tmp_path / "d.jsonl", n=6), 2)
    a, b = r.draws(0, 3), r.draws(0, 3)
    first = [next(a) for _ in range(3)]
    assert first == [next(b) for _ in range(3)]                       # a resumed step draws the same batches
    assert sorted(tuple(x[0]) for batch in first for x in batch) == sorted(tuple(x[0]) for x in r.rows)
    assert [next(r.draws(0, 4)) for _ in range(1)] != first[:1]        # another step, another order


def test_rows_longer_than_the_sft_that_wrote_them_are_left_out_as_that_sft_left_them(tmp_path):
    stage = tmp_path / "rsr-1"
    stage.mkdir()
    path = stage / "dataset.jsonl"
    path.write_text("".join(json.dumps({"input_ids": list(range(n)), "loss_mask": [0, 1] + [1] * (n - 2)}) + "\n"
                            for n in (6, 9, 12)))
    assert sorted(len(ids) for ids, _ in Replay.load(path, 4).rows) == [6, 9, 12]      # no config: no limit
    (stage / "config.json").write_text(json.dumps({"sft": {"max_len": 9}}))
    assert sorted(len(ids) for ids, _ in Replay.load(path, 4).rows) == [6, 9]           # the stage's own limit
    assert sorted(len(ids) for ids, _ in Replay.load(path, 4, max_len=12).rows) == [6, 9, 12]
    with pytest.raises(ValueError, match="of at most 5 tokens"):
        Replay.load(path, 4, max_len=5)
    (stage / "config.json").write_text(json.dumps({"sft": {"max_len": "long"}}))
    with pytest.raises(ValueError, match=r"config.json: 'sft.max_len' must be a positive integer"):
        Replay.load(path, 4)


def _example(i, family, difficulty, instruction, kind=True):
    """Example i, its action tokens the id 10 + i, as `rsr.clean.build_example` writes it (or without `kind`, as
    datasets written before that field)."""
    from rsi_lite.harness.prompts import TASK_TEMPLATE
    from rsi_lite.tasks.spec import task_kind

    row = {"task": f"train-{i:04d}-{family}-{difficulty}", "family": family,
           "input_ids": [1, 2, 3] + [10 + i] * 3, "loss_mask": [0, 0, 0, 1, 1, 1],
           "messages": [{"kind": "instruction", "role": "user",
                         "content": TASK_TEMPLATE.format(instruction=instruction, workdir="/app")}]}
    return {**row, "kind": task_kind(family, difficulty, instruction)} if kind else row


def test_draws_by_kind_give_a_rare_kind_the_share_of_a_common_one_and_name_a_row_without_a_kind(tmp_path):
    """25 examples of one kind, 2 of another, 1 of a third (the cpu profile's seed-1 RSR-1 kept 25 'Count the
    lines', 2 'Create the directory', 1 'Write the contents'): by kind, each kind fills a third of the draws and
    each example of a kind comes once before any comes twice; by example, the common kind fills 25 of 28."""
    rows = ([_example(i, "log_analysis", "easy", f"Count the lines of /app/l{i}.log.") for i in range(25)]
            + [_example(i, "file_ops", "easy", f"Create the directory /app/d{i} and a file in it.") for i in (25, 26)]
            + [_example(27, "text_processing", "medium", "Write the contents of /app/a.txt in upper case.")])
    path, old = tmp_path / "d.jsonl", tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    old.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "kind"}) + "\n" for r in rows))
    assert Replay.load(old, 8, by="kind").kinds == Replay.load(path, 8, by="kind").kinds  # from the name and text
    assert Replay.load(path, 8, by="kind").kinds[-1] == "text_processing/medium: Write the contents of X"
    drawn = {}
    for by in ("example", "kind"):
        r = Replay.load(path, 8, by=by)
        a, b = r.draws(1, 0), r.draws(1, 0)
        batches = [next(a) for _ in range(21)]                            # 168 examples
        assert batches == [next(b) for _ in range(21)] and {len(x) for x in batches} == {8}  # a resume's same
        drawn[by] = [ids[-1] - 10 for batch in batches for ids, _ in batch]
    share = {by: [sum(i < 25 for i in d), sum(i in (25, 26) for i in d), d.count(27)] for by, d in drawn.items()}
    assert share["kind"] == [56, 56, 56] and share["example"][0] > 6 * share["example"][2], share
    common = [i for i in drawn["kind"] if i < 25]
    assert sorted(common[:25]) == list(range(25)), common[:25]          # each once before any repeats
    bare = tmp_path / "bare.jsonl"
    bare.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"input_ids": [1, 2], "loss_mask": [0, 1]}) + "\n")
    Replay.load(bare, 4)                                                # by example, a row needs no kind
    with pytest.raises(ValueError, match="bare.jsonl, line 2: replay by kind needs .* task is missing"):
        Replay.load(bare, 4, by="kind")
    with pytest.raises(ValueError, match="replay_by: 'task' is neither"):
        RPRConfig(replay_by="task")


def _nll(pol, replay):
    from rsi_lite.policy.critic import token_logprobs

    ids = torch.tensor([x for x, _ in replay.rows])
    mask = torch.tensor([m for _, m in replay.rows])
    with torch.no_grad():
        lp = token_logprobs(pol, ids, torch.ones_like(ids), only=mask)
    return float(-(lp * mask).sum() / mask.sum())


def test_the_replay_term_pulls_the_actor_toward_the_examples_and_is_logged(tok, tmp_path):
    """The same joint updates with and without the replay term, on examples whose action tokens repeat one id:
    with it, their NLL falls, and ends well below where the PPO term alone leaves it; `losses/replay` is their NLL
    before each optimizer step (so a sign error would show as a rise)."""
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"input_ids": list(range(10, 22)) + [7] * 12, "loss_mask": [0] * 12 + [1] * 12})
                            + "\n" for _ in range(4)))
    replay = Replay.load(path, 4)
    after, logged = {}, {}
    for weight in (0.0, 1.0):
        pol = tiny_actor_critic(tok)
        start = _nll(pol, replay)
        cfg = RPRConfig(minibatch=4, actor_lr=1e-2, critic_lr=1e-2, replay=weight, replay_batch=4)
        opt = make_optimizers(pol, cfg)
        rows = [update(pol, fake_trajectories(), cfg, opt, train_actor=True, step=k, replay=replay) for k in range(6)]
        after[weight] = _nll(pol, replay)
        logged[weight] = [r.get("losses/replay") for r in rows]
    assert logged[0.0] == [None] * 6  # logged only with the term on
    assert logged[1.0][0] == pytest.approx(start, rel=1e-4) and logged[1.0][-1] < logged[1.0][0], logged
    # a 2-layer model with rank-4 adapters on q and v moves slowly: 6 updates take 0.3 nats off, the PPO term alone
    # none (measured 10.91 -> 10.60 with the term, 10.94 without)
    assert after[1.0] < start - 0.2 and after[1.0] < after[0.0] - 0.2, (start, after)
    # the critic-only phases never replay: the actor is not trained there
    pol = tiny_actor_critic(tok)
    row = update(pol, fake_trajectories(), RPRConfig(replay=1.0), make_optimizers(pol, RPRConfig()),
                 train_actor=False, replay=replay)
    assert "losses/replay" not in row


def _rsr(d, init, rows):
    """A self-rewrite stage as `run_rsr` leaves it: checkpoint/, dataset.jsonl (`rows`), config.json (its init)."""
    (d / "checkpoint").mkdir(parents=True)
    (d / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "config.json").write_text(json.dumps({"init": init}))
    return str(d / "checkpoint")


def _rpr(d, init, replay_from=""):
    (d / "actor").mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"init": init, "replay_from": replay_from}))
    return str(d / "actor")


ROW = {"input_ids": [1, 2], "loss_mask": [0, 1]}


def test_the_replay_source_is_the_last_self_rewrite_that_kept_examples(tmp_path):
    """RSR-N's own examples; behind an RSR stage that kept none (its checkpoint is its init's) the examples of that
    init; behind an RPR actor the examples it replayed, else those behind its own init; Base: none."""
    from rsi_lite.rpr.replay import replay_source

    rsr1 = _rsr(tmp_path / "rsr-1", "base", [ROW])
    assert replay_source(rsr1) == str(tmp_path / "rsr-1" / "dataset.jsonl")
    rpr1 = _rpr(tmp_path / "rpr-1", rsr1)
    rsr2 = _rsr(tmp_path / "rsr-2", rpr1, [{"input_ids": [1], "loss_mask": [0]}])  # kept nothing trainable
    assert replay_source(rsr2) == str(tmp_path / "rsr-1" / "dataset.jsonl")
    assert replay_source(_rpr(tmp_path / "rpr-x", rsr2, replay_from="/elsewhere/dataset.jsonl")) == \
        "/elsewhere/dataset.jsonl"
    assert replay_source(_rsr(tmp_path / "rsr-0", "base", [])) == ""  # an empty RSR-1 from Base: nothing to replay
    assert replay_source("base") == ""


@pytest.mark.parametrize("missing", ["rsr-1/dataset.jsonl", "rpr-1/config.json", "rsr-2/config.json"])
def test_a_stage_missing_what_the_replay_source_needs_is_an_error_naming_the_file(tmp_path, missing):
    """Never a silent "no replay": the stage directory exists, so its file must too."""
    from rsi_lite.rpr.replay import replay_source

    rsr1 = _rsr(tmp_path / "rsr-1", "base", [ROW])
    rpr1 = _rpr(tmp_path / "rpr-1", rsr1)
    rsr2 = _rsr(tmp_path / "rsr-2", rpr1, [])
    (tmp_path / missing).unlink()
    with pytest.raises(FileNotFoundError, match=str(tmp_path / missing)):
        replay_source(rsr2 if missing.startswith("rsr-2") else rpr1 if missing.startswith("rpr") else rsr1)


def _probe_ids():
    g = torch.Generator().manual_seed(7)
    return torch.randint(5, 1000, (2, 30), generator=g)


def test_the_replay_term_reaches_the_actor_only_and_a_step_redone_draws_the_same_rows(tok, tmp_path, monkeypatch):
    """With the term on and off, the critic after two joint updates is the same to the last bit (the term never
    reaches it) while the actor is not; an update redone at the same (seed, step), as a resumed stage redoes it,
    replays the same rows in the same order, and with one optimizer step per minibatch (`accumulate` 1) each step
    gets its own rows."""
    from rsi_lite.policy.critic import token_logprobs, values
    from rsi_lite.rpr import update as upd

    replay = Replay.load(_dataset(tmp_path / "d.jsonl", n=6), 2)
    ids = _probe_ids()
    seen = {}
    for weight in (0.0, 1.0):
        pol = tiny_actor_critic(tok)
        cfg = RPRConfig(minibatch=2, actor_lr=1e-2, critic_lr=1e-2, replay=weight, replay_batch=2)
        opt = make_optimizers(pol, cfg)
        for k in range(2):
            update(pol, fake_trajectories(), cfg, opt, train_actor=True, step=k, replay=replay)
        with torch.no_grad():
            seen[weight] = (values(pol, ids, torch.ones_like(ids)),
                            token_logprobs(pol, ids, torch.ones_like(ids), only=torch.ones_like(ids)))
    assert torch.equal(seen[0.0][0], seen[1.0][0])          # the critic: untouched by the term
    assert not torch.allclose(seen[0.0][1], seen[1.0][1])   # the actor: moved by it

    drawn = []
    real = upd.replay_backward
    monkeypatch.setattr(upd, "replay_backward", lambda pol, rows, w: drawn.append(rows) or real(pol, rows, w))
    cfg = RPRConfig(minibatch=2, accumulate=1, replay=1.0, replay_batch=2)
    for _ in range(2):  # the step, then the same step again from the same start
        pol = tiny_actor_critic(tok)
        update(pol, fake_trajectories(), cfg, make_optimizers(pol, cfg), train_actor=True, step=3, replay=replay)
    first, again = drawn[:len(drawn) // 2], drawn[len(drawn) // 2:]
    assert len(first) == 2 * cfg.ppo_epochs and first == again   # 2 minibatches x epochs, one draw each
    assert all(a != b for a, b in zip(first, first[1:]))


def test_the_replay_backward_is_weight_times_the_token_mean_nll(tok):
    """The gradient of weight x (the mean NLL over the rows' action tokens), exactly: doubling the weight doubles
    every gradient, and the NLL it returns is the token mean (rows of different lengths and masks)."""
    from rsi_lite.rpr.replay import replay_backward

    rows = [(list(range(10, 30)), [0] * 12 + [1] * 8), (list(range(40, 52)), [0] * 9 + [1] * 3)]
    grads, nlls = {}, {}
    for weight in (1.0, 2.5):
        pol = tiny_actor_critic(tok)
        pol.model.zero_grad(set_to_none=True)
        nlls[weight] = replay_backward(pol, rows, weight)
        grads[weight] = {n: p.grad.clone() for n, p in pol.model.named_parameters() if p.grad is not None}
    assert grads[1.0] and set(grads[1.0]) == set(grads[2.5])
    assert all(".actor." in n for n in grads[1.0])  # the actor's adapter only
    for n, g in grads[1.0].items():
        torch.testing.assert_close(grads[2.5][n], 2.5 * g)
    pol = tiny_actor_critic(tok)
    by_row = [_nll(pol, Replay([r], 1)) for r in rows]
    assert nlls[1.0] == pytest.approx((8 * by_row[0] + 3 * by_row[1]) / 11, rel=1e-5)  # tokens, not rows, weigh
