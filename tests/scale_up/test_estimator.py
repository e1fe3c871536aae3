"""TB-GAE inside verl: the adapter (`scale_up.estimator`) and the trainer's advantage step (`scale_up.trainer`)
on batches built by verl's own code, against a plain-loop TB-GAE written here from the equations.

The batches: episodes as verl's agent loop returns them (`AgentLoopOutput`), turned into the field store's rows
by verl's `as_dict` and `list_of_dict_to_tensordict` (what `AgentLoopWorkerTQ` puts into TransferQueue),
padded by tensordict's `to_padded_tensor` (what the trainer does): responses of different lengths, the score
on the last response token, which is an observation token in the multi-turn rows, and per-turn rewards in one
row's extra fields.

Run (verl's environment, `make verl-env`):
    .venv-verl/bin/python -m pytest -q tests/scale_up/test_estimator.py
"""

import math

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402

# (prompt length, response mask, score, per-turn rewards or None); the values are drawn per token below
EPISODES = [
    (3, [1, 1, 1, 0, 0, 1, 1, 0, 0, 0], 1.0, None),        # two actions, ends on an observation
    (2, [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0], 0.4, None),  # three actions, longest, ends on an observation
    (4, [1, 1, 1, 1], 0.5, None),                          # one action, ends on its own token
    (3, [1, 0, 0, 1, 1, 0], 0.9, [0.25, 0.9]),             # per-turn verdict rewards, one per action
]
GAMMA, LAM = 0.9, 0.7


def reference(mask, values, score, turn_rewards, gamma, lam):
    """TB-GAE of one response, plain Python: nodes are the action tokens; crossing B turn boundaries between
    two nodes discounts by gamma**B and decays the trace by lam**B; the episode is terminal; the score sits on
    the last action token (or each turn's delta on that turn's last action token)."""
    turn, prev, nodes = 0, 0, []
    for t, m in enumerate(mask):
        if m and not prev:
            turn += 1
        if m:
            nodes.append((t, turn))
        prev = m
    reward = [0.0] * len(mask)
    if turn_rewards is not None and len(turn_rewards) == turn:
        last_of = {k: t for t, k in nodes}
        for k in range(1, turn + 1):
            reward[last_of[k]] = turn_rewards[k - 1] - (turn_rewards[k - 2] if k > 1 else 0.0)
    else:
        reward[nodes[-1][0]] = score
    adv, ret = [0.0] * len(mask), [0.0] * len(mask)
    next_v, next_a, next_turn = 0.0, 0.0, nodes[-1][1] + 1
    for t, k in reversed(nodes):
        b = next_turn - k
        delta = reward[t] + gamma ** b * next_v - values[t]
        next_a = delta + gamma ** b * lam ** b * next_a
        adv[t], ret[t] = next_a, next_a + values[t]
        next_v, next_turn = values[t], k
    return adv, ret


def whiten_reference(rows, masks):
    xs = [a for row, m in zip(rows, masks) for a, mm in zip(row, m) if mm]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    return [[(a - mean) / math.sqrt(var + 1e-8) if mm else 0.0 for a, mm in zip(row, m)]
            for row, m in zip(rows, masks)]


def _outputs():
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput

    from scale_up.estimator import TURN_REWARDS

    out = []
    for i, (p, mask, score, turns) in enumerate(EPISODES):
        out.append(AgentLoopOutput(prompt_ids=list(range(100, 100 + p)),
                                   response_ids=[10 + i + t for t in range(len(mask))], response_mask=mask,
                                   reward_score=score, num_turns=2 * sum(1 for t in range(len(mask))
                                                                         if mask[t] and (t == 0 or not mask[t - 1])),
                                   metrics=AgentLoopMetrics(), extra_fields={TURN_REWARDS: turns}))
    return out


def _values():
    g = torch.Generator().manual_seed(0)
    return [torch.rand(len(m), generator=g).tolist() for _, m, _, _ in EPISODES]


def _field_rows():
    """The rows as the v1 agent loop stores them (`AgentLoopWorkerTQ._agent_loop_postprocess`)."""
    rows = []
    for o, v in zip(_outputs(), _values()):
        field = o.as_dict()
        field["values"] = torch.tensor(v)  # the critic's per-response-token values (`_compute_values`)
        field["uid"] = torch.tensor(len(rows))
        rows.append(field)
    return rows


def _expected(whiten=True):
    masks = [m for _, m, _, _ in EPISODES]
    refs = [reference(m, v, s, tr, GAMMA, LAM) for (_, m, s, tr), v in zip(EPISODES, _values())]
    adv = [a for a, _ in refs]
    return (whiten_reference(adv, masks) if whiten else adv), [r for _, r in refs]


def test_verl_places_some_scores_on_observation_tokens():
    """The premise: in verl's batch the score of a multi-turn episode sits on a token that is not the model's."""
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    td = list_of_dict_to_tensordict(_field_rows()).to_padded_tensor()
    scored = td["rm_scores"].nonzero()
    on_observation = [int(td["response_mask"][r, c]) == 0 for r, c in scored.tolist()]
    assert any(on_observation) and not all(on_observation)


def _padded_batch():
    from verl.protocol import DataProto
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    td = list_of_dict_to_tensordict(_field_rows())
    extra = td.pop("extra_fields")
    data = DataProto(batch=td.select("response_mask", "rm_scores", "values").to_padded_tensor())
    data.batch["token_level_rewards"] = data.batch["rm_scores"]
    return data, extra


@pytest.mark.parametrize("whiten", [True, False])
def test_the_adapter_equals_the_plain_loop_tb_gae(whiten):
    from scale_up.estimator import TURN_REWARDS, tb_gae_advantages

    data, extra = _padded_batch()
    assert data.batch["response_mask"].shape == (4, 13)  # right-padded to the longest response
    turns = [e[TURN_REWARDS] for e in extra.tolist()]
    adv, ret = tb_gae_advantages(data.batch["token_level_rewards"], data.batch["values"],
                                 data.batch["response_mask"], gamma_turn=GAMMA, lam_turn=LAM,
                                 turn_rewards=turns, whiten=whiten)
    want_adv, want_ret = _expected(whiten)
    for i, (_, m, _, _) in enumerate(EPISODES):
        n = len(m)
        assert adv[i, :n].tolist() == pytest.approx(want_adv[i], abs=1e-5)
        assert ret[i, :n].tolist() == pytest.approx(want_ret[i], abs=1e-5)
        assert adv[i, n:].abs().sum() == 0 and ret[i, n:].abs().sum() == 0  # padding


def test_the_trainer_fields_equal_the_reference_and_differ_from_verls_gae():
    """`advantage_fields` (what `TBGAETrainer._compute_advantage` computes) with verl's `algorithm` config; verl's
    own GAE on the same batch drops the rewards that sit on observation tokens, so it cannot agree."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.core_algos import compute_gae_advantage_return

    from scale_up.trainer import advantage_fields

    data, extra = _padded_batch()
    algo = OmegaConf.create({"adv_estimator": "tb_gae", "gamma": GAMMA, "lam": LAM})
    out = advantage_fields(data, algo, extra)
    want_adv, _ = _expected(True)
    for i, (_, m, _, _) in enumerate(EPISODES):
        assert out["advantages"][i, :len(m)].tolist() == pytest.approx(want_adv[i], abs=1e-5)
    verl_adv, _ = compute_gae_advantage_return(data.batch["token_level_rewards"], data.batch["values"],
                                               data.batch["response_mask"], GAMMA, LAM)
    assert not torch.allclose(verl_adv, out["advantages"], atol=1e-3)


def test_the_generic_hook_refuses_without_values_and_the_name_is_registered():
    from verl.trainer.ppo import core_algos

    from scale_up.estimator import compute_tb_gae_advantage, register

    register()
    register()  # idempotent
    assert core_algos.get_adv_estimator_fn("tb_gae") is compute_tb_gae_advantage
    data, _ = _padded_batch()
    with pytest.raises(ValueError, match="values"):
        core_algos.get_adv_estimator_fn("tb_gae")(token_level_rewards=data.batch["token_level_rewards"],
                                                  response_mask=data.batch["response_mask"], config=None)


@pytest.fixture(scope="module")
def field_store():
    """A local Ray and verl's field store (TransferQueue), as verl's v1 trainer runs them."""
    ray = pytest.importorskip("ray")
    import transfer_queue as tq
    from omegaconf import OmegaConf

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, namespace="rsi-lite-tests")
    tq.init(OmegaConf.create({"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}))
    yield tq
    tq.close()
    ray.shutdown()


def test_the_registered_trainer_computes_advantages_through_verls_field_store(field_store):
    """The whole advantage step of `TBGAETrainer` (registered under trainer.v1.trainer_mode=rsi_tbgae): rows put
    into TransferQueue as the agent loop puts them, advantages and returns read back as the actor reads them."""
    tq = field_store
    from omegaconf import OmegaConf
    from transfer_queue import KVBatchMeta
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    from scale_up.trainer import install

    cls = install()
    assert get_trainer_cls("rsi_tbgae") is cls
    rows = _field_rows()
    keys = [f"u{i}_0_0" for i in range(len(rows))]
    tq.kv_batch_put(keys=keys, partition_id="train", fields=list_of_dict_to_tensordict(rows),
                    tags=[{"status": "success"} for _ in keys])
    trainer = object.__new__(cls)  # the advantage step reads only the config and the field store
    trainer.config = OmegaConf.create({"algorithm": {"adv_estimator": "tb_gae", "gamma": GAMMA, "lam": LAM,
                                                     "use_kl_in_reward": False, "rollout_correction": None}})
    metrics = {}
    trainer._compute_advantage(KVBatchMeta(keys=keys, tags=[{} for _ in keys], partition_id="train"), metrics)
    got = tq.kv_batch_get(keys=keys, partition_id="train", select_fields=["advantages", "returns"])
    want_adv, want_ret = _expected(True)
    for i in range(len(rows)):
        assert got["advantages"][i].tolist() == pytest.approx(want_adv[i], abs=1e-5)
        assert got["returns"][i].tolist() == pytest.approx(want_ret[i], abs=1e-5)


def test_critic_inheritance_loads_the_previous_phases_critic_at_a_fresh_start_only(tmp_path):
    """`trainer.rsi_critic_from`: at a fresh start (verl's own `_load_checkpoint` found nothing to resume) the
    previous phase's critic is loaded with verl's `critic_wg.load_checkpoint`; a resumed run keeps its own."""
    from omegaconf import OmegaConf

    from scale_up.trainer import install

    prev = tmp_path / "rpr-1" / "global_step_20"
    (prev / "critic").mkdir(parents=True)
    own = tmp_path / "rpr-2" / "global_step_3"
    for part in ("actor", "critic"):
        (own / part).mkdir(parents=True)
    loads = []

    class Group:
        def __init__(self, name):
            self.name = name

        def load_checkpoint(self, local_path, del_local_after_load=False):
            loads.append((self.name, local_path))

    def trainer(resume_mode, resume_from=None):
        t = object.__new__(install())
        t.config = OmegaConf.create({"trainer": {"resume_mode": resume_mode, "resume_from_path": resume_from,
                                                 "del_local_ckpt_after_load": False, "rsi_critic_from": str(prev),
                                                 "default_local_dir": str(tmp_path / "rpr-2")}})
        t.use_critic, t.actor_rollout_ref_wg = True, None
        t.actor_rollout_wg, t.critic_wg = Group("actor"), Group("critic")
        t.train_dataloader, t.trainer_mode = None, "sync"
        return t

    trainer("disable")._load_checkpoint()
    assert loads == [("critic", str(prev / "critic"))]
    loads.clear()
    resumed = trainer("resume_path", str(own))
    resumed._load_checkpoint()
    assert resumed.global_steps == 3
    assert loads == [("actor", str(own / "actor")), ("critic", str(own / "critic"))]
