"""The terminal episode as a verl agent loop: one task, one sandbox, one episode per `AgentLoopBase.run`.

The kit's own parts do the work: its harness (prompts, parsing, turn limits), its sandbox (bubblewrap by
default), its verifier (tests copied in after the agent phase, CTRF + reward file), its rewards (S, FDR, SPR)
and its `TokenStream`, so the token ids and the action mask are built exactly as the kit's rollout engine
builds a `Trajectory` (the model's replies verbatim, everything else from the chat template). verl's server
(`server_manager.generate`) samples the replies.

What verl receives (`AgentLoopOutput`): prompt = the conversation up to the first reply's header (system and
instruction), response = the rest (each reply, mask 1, with its log-probabilities; headers, closings and
observations, mask 0), the episode's reward (`rsi.reward`, SPR by default) as `reward_score`, and extra fields:
`rsi_turn_rewards` (one verdict reward per action, with `rsi.verify_turns`: what the TB-GAE trainer reads for
per-turn rewards), `rsi_trajectory` (the kit's record of the episode, one JSON line, what the export writes
to the kit's run directory), `rsi_rewards`.

Seeds: each episode gets its own (`episode_seed`: from the run's seed, the task and the sample's index), and
each of its requests its own from that, passed in the sampling parameters. vLLM seeds per request, so repeated
prompts (rollout.n samples of one task, the k runs of an evaluation) are sampled independently and a run can
be repeated. (verl's vLLM server gives every request the same seed when `full_determinism` is on.)

Settings: the `rsi` section of the verl config (`RSIEpisodeConfig`'s fields; scale_up/configs/rsi_27b.yaml).
Registered for verl by name in scale_up/configs/agent_loops.yaml (`rsi_terminal`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass, fields, replace

from rsi_lite.algos.rewards import DEFAULT_DIVISOR, REWARDS, compute_reward
from rsi_lite.harness.harnesses import HarnessState, make_harness
from rsi_lite.harness.messages import Message
from rsi_lite.rollout.engine import RolloutConfig
from rsi_lite.rollout.trajectory import TokenStream, Trajectory, stop_token_ids
from rsi_lite.sandbox import SandboxError, SandboxLimits, make_sandbox
from rsi_lite.tasks.task import load_task
from rsi_lite.verify.verifier import VerifierReport, verify_sandbox

from .estimator import TURN_REWARDS

VERL_OWNS = ("temperature", "top_p", "workers", "batch_size", "open_episodes", "page_size", "engine",
             "generation_backend", "compute_type", "stop_after_block")
"""`RolloutConfig` fields verl decides here (sampling: `actor_rollout_ref.rollout`; batching and serving: verl's
servers): an `rsi` section that names one is refused rather than silently ignored."""


@dataclass
class RSIEpisodeConfig(RolloutConfig):
    """How an episode runs: the kit's `RolloutConfig`, same fields and meanings (harness, action format, turn and
    token limits, context budget, observation size, command timeout, sandbox backend, verifier mode,
    verify_turns, the run's seed: each episode's own comes from it, `episode_seed`), except those in `VERL_OWNS`,
    which are verl's; and two of its own."""

    reward: str = "spr"
    """The reward verl trains on (`reward_score`): a key of `rsi_lite.algos.rewards.REWARDS`."""
    policy: str = "verl"
    """The name the trajectory records as its policy."""

    @classmethod
    def from_config(cls, section) -> "RSIEpisodeConfig":
        section = dict(section or {})
        theirs = sorted(set(section) & set(VERL_OWNS))
        if theirs:
            raise ValueError(f"rsi.{', rsi.'.join(theirs)}: verl's to set (actor_rollout_ref.rollout), not the episode's")
        unknown = sorted(set(section) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"rsi.{', rsi.'.join(unknown)}: not a field of RSIEpisodeConfig (RolloutConfig's)")
        return cls(**section)

    def for_row(self, info: dict) -> "RSIEpisodeConfig":
        """This config with a dataset row's own `harness` and `max_turns` where the row names them
        (`extra_info`): self-rewrite's discovery runs one task under several harnesses in one batch."""
        return replace(self, **{k: info[k] for k in ROW_FIELDS if info.get(k) is not None})


ROW_FIELDS = ("harness", "max_turns")
"""The episode settings a dataset row may set for itself."""


def episode_seed(run_seed: int, task: str, sample) -> int:
    """A seed of its own for each (run, task, sample): stable across processes (no Python hash)."""
    digest = hashlib.sha256(f"{run_seed}:{task}:{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def sample_key(row_sample, session_id) -> str:
    """Which sample of a task an episode is: the dataset row's (`extra_info.sample`, repeated rows of one task)
    and verl's session (`rollout.n` episodes of one row), both, so no two of them share a seed."""
    return f"{int(row_sample)}.{int(session_id)}"


def request_seed(seed: int, turn: int) -> int:
    """The seed of an episode's turn-th request."""
    return episode_seed(seed, "turn", turn)


class TerminalEpisode:
    """One episode's state; the blocking steps (sandbox, verifier) are plain methods, run in threads by `run`."""

    def __init__(self, task, seed: int, cfg: RSIEpisodeConfig, tokenizer, guidance: str | None = None):
        self.task, self.seed, self.cfg, self.tok = task, seed, cfg, tokenizer
        self.stop = stop_token_ids(tokenizer)
        self.limits = SandboxLimits(command_timeout=cfg.command_timeout)
        self.harness = make_harness(cfg.harness, action_format=cfg.action_format, max_turns=cfg.max_turns,
                                    observation_chars=cfg.observation_chars, command_timeout=cfg.command_timeout)
        self.messages = list(self.harness.start(task.instruction, task.environment.workdir, guidance=guidance))
        self.state = HarnessState()
        self.stream = TokenStream(tokenizer, self.harness.system_prompt(), self.messages)
        self.sandbox = None
        self.lost = ""
        self.report = None
        self.turn_reports: list = []
        self.verdicts: dict = {}
        self.timings = {"generate_s": 0.0, "sandbox_s": 0.0, "verify_s": 0.0, "open_s": 0.0}

    def open(self) -> None:
        t = time.monotonic()
        self.sandbox = make_sandbox(self.task, backend=self.cfg.backend, limits=self.limits,
                                    verifier=self.cfg.verifier_mode == "shared").start()
        self.timings["open_s"] = time.monotonic() - t

    def next_prompt(self) -> list[int] | None:
        """The ids of the next prompt, or None when the episode is over (done, or it no longer fits)."""
        if not self.state.done and not self.stream.fit(self.cfg.context_budget - self.cfg.max_new_tokens):
            self.state.finish("context")
        return None if self.state.done else self.stream.prompt_ids()

    def add_reply(self, token_ids: list[int], logprobs: list[float]) -> None:
        self.messages.append(Message("action", self.stream.add_action(token_ids, logprobs, self.stop)))

    def _verify(self):
        t = time.monotonic()
        rep = verify_sandbox(self.sandbox, self.task, limits=self.limits, memo=self.verdicts)
        self.timings["verify_s"] += time.monotonic() - t
        return rep

    def act(self) -> None:
        """The harness acts on the last reply (its commands run in the sandbox); the observations join."""
        t, verified = time.monotonic(), self.timings["verify_s"]

        def run(command, timeout):
            try:
                return self.sandbox.exec(command, timeout=timeout)
            except SandboxError as err:  # the episode's own sandbox is gone
                self.lost = str(err)
                raise

        ran = self.state.commands_run
        try:
            new = self.harness.step(self.state, self.messages[-1].content, run, self._verify)
        except SandboxError:
            if not self.lost:
                raise
            self.state.finish("sandbox")
            new = []
        self.timings["sandbox_s"] += time.monotonic() - t - (self.timings["verify_s"] - verified)
        if self.cfg.verify_turns:
            last = self.turn_reports[-1] if self.turn_reports else None
            self.turn_reports.append(None if self.lost else self._verify() if self.state.commands_run > ran else last)
        if new:
            self.stream.add_messages(new)
            self.messages += new

    def finish(self) -> None:
        """The verdict on the workspace as the episode left it; the sandbox closes."""
        t = time.monotonic()
        try:
            if self.lost:
                self.report = VerifierReport(strict=0, passed=0, failed=0, total=0, valid=False,
                                             reason=f"sandbox lost: {self.lost}")
            elif (self.cfg.verify_turns and self.turn_reports and self.turn_reports[-1] is not None
                  and self.cfg.verifier_mode == "fresh"):
                self.report = self.turn_reports[-1]
            else:
                self.report = verify_sandbox(self.sandbox, self.task, limits=self.limits,
                                             mode=self.cfg.verifier_mode, memo=self.verdicts)
        finally:
            self.timings["verify_s"] += time.monotonic() - t
            self.close()

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None

    def trajectory(self, divisor: float = DEFAULT_DIVISOR, sampler: dict | None = None) -> Trajectory:
        """The kit's record of this episode (what `rsi_lite.rollout.engine` writes for one)."""
        ids, mask, lps, spans = [], [], [], []
        for s in self.stream.segments:
            if s.kind == "action":
                spans.append([len(ids), len(ids) + len(s.ids)])
            ids += s.ids
            mask += s.mask
            lps += s.logprobs
        rep = self.report.to_dict()
        rewards = {k: compute_reward(k, rep, divisor=divisor) for k in REWARDS}
        verdicts = [{k: r.to_dict()[k] for k in ("strict", "passed", "failed", "total", "valid")}
                    if r is not None else None for r in self.turn_reports]
        turn_rewards = {k: [compute_reward(k, v, divisor=divisor) if v is not None else 0.0 for v in verdicts]
                        for k in REWARDS} if verdicts else {}
        generated = sum(mask)
        t = self.task
        return Trajectory(
            task=t.name, task_path=str(t.path), suite=t.suite, family=t.family, difficulty=t.difficulty,
            harness=self.cfg.harness, action_format=self.cfg.action_format, policy=self.cfg.policy, seed=self.seed,
            system=self.stream.chat[0]["content"], messages=[m.to_dict() for m in self.messages], token_ids=ids,
            action_mask=mask, logprobs=lps, turn_spans=spans, finish_reason=self.state.finish_reason,
            turns=self.state.turn, verifier=rep, rewards=rewards,
            tokens={"prompt": len(ids) - generated, "generated": generated, "total": len(ids)},
            timings={k: round(v, 3) for k, v in self.timings.items()}, context_cuts=self.stream.cuts,
            turn_verdicts=verdicts, turn_rewards=turn_rewards, sampler=dict(sampler or {}))


async def run_episode(server, request_id: str, task, seed: int, cfg: RSIEpisodeConfig, tokenizer,
                      sampling_params: dict, *, guidance: str | None = None, divisor: float = DEFAULT_DIVISOR):
    """One episode against `server` (verl's `LLMServerClient` interface); returns (Trajectory, prompt length,
    generate seconds). Blocking sandbox and verifier work runs in threads, so other episodes keep generating."""
    ep = TerminalEpisode(task, seed, cfg, tokenizer, guidance)
    prompt_len = len(ep.stream.ids())  # system and instruction: verl's prompt
    sampling = {k: v for k, v in sampling_params.items() if k not in ("seed", "max_tokens", "stop_token_ids")}
    sampling.update(max_tokens=cfg.max_new_tokens, stop_token_ids=sorted(ep.stop))
    try:
        await asyncio.to_thread(ep.open)
        turn = 0
        while (prompt := ep.next_prompt()) is not None:
            t = time.monotonic()
            out = await server.generate(request_id=request_id, prompt_ids=prompt,
                                        sampling_params={**sampling, "seed": request_seed(seed, turn)})
            ep.timings["generate_s"] += time.monotonic() - t
            lps = list(out.log_probs) if out.log_probs is not None else [0.0] * len(out.token_ids)
            ep.add_reply(list(out.token_ids), lps)
            await asyncio.to_thread(ep.act)
            turn += 1
        await asyncio.to_thread(ep.finish)
    finally:
        ep.close()
    sampler = {"backend": "verl", "temperature": sampling.get("temperature"), "top_p": sampling.get("top_p")}
    return ep.trajectory(divisor, sampler), prompt_len


def loop_output_fields(traj: Trajectory, prompt_len: int, reward: str) -> dict:
    """The `AgentLoopOutput` fields of an episode (see the module docstring)."""
    per_turn = traj.turn_rewards.get(reward) if traj.turn_rewards else None
    return dict(prompt_ids=traj.token_ids[:prompt_len], response_ids=traj.token_ids[prompt_len:],
                response_mask=traj.action_mask[prompt_len:], response_logprobs=traj.logprobs[prompt_len:],
                reward_score=float(traj.rewards[reward]), num_turns=2 * traj.turns + 1,
                extra_fields={TURN_REWARDS: per_turn, "rsi_rewards": dict(traj.rewards),
                              "rsi_trajectory": traj.to_json()})


class KitServerClient:
    """verl's `LLMServerClient.generate` over HTTP to the kit's engine (`python -m scale_up.kit_server serve`):
    the CPU stand-in for verl's vLLM servers, a separate process in the kit's environment."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def _post(self, body: dict) -> dict:
        import urllib.error
        import urllib.request

        req = urllib.request.Request(self.url + "/generate", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"kit server: {e.read().decode()}") from e

    async def generate(self, request_id, *, prompt_ids: list[int], sampling_params: dict, **_):
        from verl.workers.rollout.replica import TokenOutput

        body = {"prompt_ids": list(prompt_ids), "sampling_params": dict(sampling_params)}
        return TokenOutput(**await asyncio.to_thread(self._post, body))


def _agent_loop_class():
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput

    class TerminalAgentLoop(AgentLoopBase):
        """`rsi_terminal`: a dataset row names a task directory (`extra_info.task_path`), optionally a runbook
        shown privately (`extra_info.guidance`: self-rewrite's guided re-solves) and its own harness or turn
        limit (`RSIEpisodeConfig.for_row`)."""

        async def run(self, sampling_params: dict, **kwargs) -> AgentLoopOutput:
            info = dict(kwargs.get("extra_info") or {})
            cfg = RSIEpisodeConfig.from_config(self.config.get("rsi", {})).for_row(info)
            task = load_task(info["task_path"])
            seed = episode_seed(cfg.seed, task.name, sample_key(info.get("sample", 0), kwargs.get("session_id", 0)))
            t = time.monotonic()
            traj, prompt_len = await run_episode(self.server_manager, kwargs.get("uid", task.name), task, seed, cfg,
                                                 self.tokenizer, sampling_params, guidance=info.get("guidance"))
            metrics = AgentLoopMetrics(generate_sequences=traj.timings.get("generate_s", 0.0),
                                       tool_calls=time.monotonic() - t - traj.timings.get("generate_s", 0.0))
            return AgentLoopOutput(**loop_output_fields(traj, prompt_len, cfg.reward), metrics=metrics)

    return TerminalAgentLoop


def __getattr__(name):
    # verl instantiates the loop by its dotted path (scale_up.agent_loop.TerminalAgentLoop); built on first use so
    # that this module imports without verl (the kit's environment lints and reads it)
    if name == "TerminalAgentLoop":
        cls = _agent_loop_class()
        globals()[name] = cls
        return cls
    raise AttributeError(name)
