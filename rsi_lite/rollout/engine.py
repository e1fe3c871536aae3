"""Batched multi-turn episodes: harness + policy + sandbox + verifier -> Trajectory records.

Two engines, same records:
- `continuous` (default): continuous batching. Up to `batch_size` replies decode at once;
  an episode's reply joins the running batch as soon as its prompt is ready and a slot
  is free, and leaves it when finished; its command then runs in its sandbox (a worker
  thread) while the others keep decoding. Up to `open_episodes` (default twice
  `batch_size`) episodes are open, so a freed slot is refilled at once by an episode
  whose prompt is ready instead of idling while commands run; of the ready prompts, the
  episode with the fewest turns taken speaks first (`ReadyQueue`). No episode waits for the
  slowest row of a turn, and the shared prompt prefix is computed once (see `policy.gen.hf_continuous`).
- `lockstep`: at each turn one batched `generate` call for every episode still active,
  then their commands concurrently; more episodes than `batch_size` run in waves. Simple
  to reason about; kept for comparison (`python -m rsi_lite.bench.rollout`).
Each finished episode becomes one Trajectory (one JSON line).

Tokens, segments and the context budget: see `trajectory`.
"""

from __future__ import annotations

import heapq
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from ..algos.rewards import DEFAULT_DIVISOR, REWARDS, compute_reward
from ..harness.harnesses import HarnessState, make_harness
from ..harness.messages import Message
from ..policy.gen.hf_continuous import ForwardMeter
from ..policy.gen.hf_generate import generate_batch
from ..sandbox import SandboxError, SandboxLimits, make_sandbox
from ..tasks.task import Task
from ..verify.verifier import VerifierReport, verify_sandbox
from .trajectory import TokenStream, Trajectory, stop_token_ids

BLOCK_CLOSED = re.compile(r"```[^\n`]*\n.*?\n```", re.S)


@dataclass
class RolloutConfig:
    """How episodes are run."""

    harness: str = "plain"
    """plain | exemplar | state_machine | verifier_feedback."""
    action_format: str = "bash"
    """bash (a fenced block, default for small models) or json (Terminus 2)."""
    max_turns: int = 6
    """Turns (model replies) per episode."""
    max_new_tokens: int = 96
    """Tokens the model may generate per turn."""
    temperature: float = 0.6
    """Sampling temperature (0: greedy). The paper evaluated at 0.6."""
    top_p: float = 1.0
    """Nucleus sampling mass."""
    context_budget: int = 2048
    """Tokens of prompt + reply per turn; older observations are cut to stay inside."""
    observation_chars: int = 1500
    """Characters of terminal output shown per turn (first and last halves kept)."""
    command_timeout: float = 20.0
    """Seconds per command before Ctrl-C."""
    backend: str = "auto"
    """Sandbox backend."""
    workers: int = 8
    """Threads running sandbox commands concurrently."""
    batch_size: int = 32
    """Replies decoded at once (lockstep: episodes live at once); the rest wait for a free place. 32 slots
    generate 1.34x the tokens per second of 16 on 2 cores, and 64 no more than 32 (`python -m
    rsi_lite.bench.rollout --runs engine --backends transformers --batch B --episodes 80`: 46.8, 62.9 and 61.2
    tokens/s, the same 7,068 greedy tokens each; docs/experiments.md)."""
    open_episodes: int = 0
    """continuous: episodes open at once (each holds a sandbox). 0: twice `batch_size`, so that while some
    episodes run commands or their verifier, others have their next prompt ready for every decode slot
    that frees. With `batch_size` 1 and `open_episodes` 1, one episode at a time."""
    page_size: int = 64
    """continuous: tokens per KV-cache page. Only whole pages are shared between prompts, so each turn
    computes again the partial page its previous prompt and reply ended on. Smaller pages compute less of
    that, yet 16 ran slower than 64 on the CPU (`python -m rsi_lite.bench.rollout --page-size`, README)."""
    engine: str = "continuous"
    """continuous (episodes join and leave the batch at any step) or lockstep (one generate call per turn)."""
    generation_backend: str = "auto"
    """continuous engine: what serves the replies, 'transformers', 'ctranslate2' (compiled CPU engine, the actor's
    weights merged and converted when they change), 'vllm' (GPUs, scale_up/) or 'auto' (vLLM for a vLLM-served
    policy, else transformers: `policy.gen.dispatch` says why).
    The lockstep engine always calls transformers' generate."""
    compute_type: str = "float32"
    """ctranslate2: the weights' precision. float32 keeps the transformers engine's greedy choices; int8 is
    faster and changes them."""
    seed: int = 0
    """Sampling seed of the run (episode seeds label the Mean@k runs)."""
    verifier_mode: str = "fresh"
    """fresh (default): the verdict comes from a new sandbox holding a copy of the workspace, so nothing the agent
    left running can touch it; shared: Harbor's own mode, the tests run in the agent's sandbox after it (a task
    whose tests need the server the agent started)."""
    stop_after_block: bool = True
    """bash format: end a reply once its first code block is closed (what follows is never run anyway)."""
    verify_turns: bool = False
    """Verify the workspace after every action that ran a command (a fresh copy each time, as the final verdict),
    so each turn has its verdict (`Trajectory.turn_verdicts`) and its reward (`turn_rewards`): what RPR's
    `reward_timing="turn"` trains on. The last one is the episode's verdict. A workspace copy per turn; the tests run only on a workspace the episode has not verified yet."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Episode:
    task: Task
    seed: int
    harness: object
    state: HarnessState
    stream: TokenStream
    messages: list[Message]
    sandbox: object
    timings: dict = field(default_factory=lambda: {"generate_s": 0.0, "sandbox_s": 0.0, "verify_s": 0.0, "open_s": 0.0})
    report: object = None
    verifier_mode: str = "fresh"
    """The final verdict's mode (`verify.VERIFIER_MODES`); a verifier-feedback harness's checks between turns
    always run fresh, so the tests never enter the sandbox while the agent still acts."""
    lost: str = ""
    """Why the sandbox died mid-episode (a command can kill its shell, e.g. `kill -9 $PPID`); empty if it lives."""
    verify_turns: bool = False
    turn_reports: list = field(default_factory=list)
    """verify_turns: the verdict after each action (None before any command ran: nothing changed yet)."""
    verdicts: dict = field(default_factory=dict)
    """Fresh verdicts by workspace fingerprint (`verify_sandbox`'s memo): the tests run once per distinct
    workspace of the episode, so an action that only reads costs a copy, not a verifier run."""


def run_episodes(policy, jobs: list[tuple], cfg: RolloutConfig | None = None, *, policy_name: str = "base",
                 reward_divisors: dict | None = None, progress: bool = False) -> list[Trajectory]:
    """Run one episode per job, (task, seed) or (task, seed, guidance); return their trajectories in job order."""
    cfg = cfg or RolloutConfig()
    if cfg.engine == "continuous":
        return _run_continuous(policy, jobs, cfg, policy_name, reward_divisors or {}, progress)
    if cfg.engine != "lockstep":
        raise ValueError(f"RolloutConfig.engine: {cfg.engine!r} is neither 'continuous' nor 'lockstep'")
    from ..policy.gen.dispatch import is_vllm

    if is_vllm(policy):
        raise ValueError("a vLLM-served policy needs RolloutConfig.engine='continuous' (lockstep calls generate)")
    out: list[Trajectory] = []
    for start in range(0, len(jobs), cfg.batch_size):
        out += _run_wave(policy, jobs[start:start + cfg.batch_size], cfg, policy_name, reward_divisors or {}, progress)
    return out


def _run_wave(policy, jobs, cfg, policy_name, divisors, progress) -> list[Trajectory]:
    tok, model = policy.tokenizer, policy.model
    stop = stop_token_ids(tok)
    limits = SandboxLimits(command_timeout=cfg.command_timeout)
    t_wall = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=cfg.workers)
    clock, meter = {"generating": 0.0, "waiting": 0.0}, ForwardMeter(model)  # lockstep: always transformers

    futures = [pool.submit(_open_episode, job, cfg, tok, limits) for job in jobs]
    eps = [f.result() for f in futures if not f.exception()]
    try:
        for f in futures:
            if f.exception():
                raise f.exception()
        bar = _progress(len(eps), progress)
        while active := [e for e in eps if not e.state.done]:
            for e in active:
                if not e.stream.fit(cfg.context_budget - cfg.max_new_tokens):
                    e.state.finish("context")
            active = [e for e in active if not e.state.done]
            if not active:
                break
            # one batched call for every active episode; the seed follows the batch, so the same
            # jobs in the same batches sample the same tokens
            t0 = time.monotonic()
            with meter:
                gens = generate_batch(model, tok, [e.stream.prompt_ids() for e in active],
                                      max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature,
                                      top_p=cfg.top_p, stop_ids=sorted(stop),
                                      stop_pattern=BLOCK_CLOSED if cfg.stop_after_block and cfg.action_format == "bash" else None,
                                      seed=hash((active[0].seed, active[0].state.turn)) % (2**31))
            dt = time.monotonic() - t0
            clock["generating"] += dt
            for e, g in zip(active, gens):
                e.timings["generate_s"] += dt / len(active)
                reply = e.stream.add_action(g.token_ids, g.logprobs, stop)
                e.messages.append(Message("action", reply))
            for e, new in zip(active, pool.map(lambda e: _act(e, limits), active)):
                if new:
                    e.stream.add_messages(new)
                    e.messages += new
            bar.update(sum(e.state.done for e in eps) - bar.n)
        list(pool.map(lambda e: _final_verify(e, limits), eps))
        bar.close()
        clock["waiting"] = time.monotonic() - t_wall - clock["generating"]  # sandboxes opening, commands, verifiers
    finally:
        for e in eps:
            e.sandbox.close()
        pool.shutdown(wait=True)
    wall = time.monotonic() - t_wall
    trajs = [_trajectory(e, cfg, policy_name, divisors, wall) for e in eps]
    _account(clock, meter, None, trajs)
    return trajs


def _open_episode(job: tuple, cfg: RolloutConfig, tok, limits: SandboxLimits) -> _Episode:
    """A job is (task, seed) or (task, seed, guidance): a runbook shown privately during a guided re-solve."""
    task, seed, *rest = job
    h = make_harness(cfg.harness, action_format=cfg.action_format, max_turns=cfg.max_turns,
                     observation_chars=cfg.observation_chars, command_timeout=cfg.command_timeout)
    msgs = h.start(task.instruction, task.environment.workdir, guidance=rest[0] if rest else None)
    t0 = time.monotonic()
    sb = make_sandbox(task, backend=cfg.backend, limits=limits, verifier=cfg.verifier_mode == "shared").start()
    try:
        e = _Episode(task, seed, h, HarnessState(), TokenStream(tok, h.system_prompt(), msgs), list(msgs), sb,
                     verifier_mode=cfg.verifier_mode, verify_turns=cfg.verify_turns)
        e.timings["open_s"] = time.monotonic() - t0
        return e
    except BaseException:
        sb.close()
        raise


def _run_continuous(policy, jobs, cfg, policy_name, divisors, progress) -> list[Trajectory]:
    """The continuous engine: one loop that feeds ready prompts to the batcher and finished replies to the sandboxes."""
    from collections import deque
    from concurrent.futures import wait

    tok, stop = policy.tokenizer, stop_token_ids(policy.tokenizer)
    limits = SandboxLimits(command_timeout=cfg.command_timeout)
    t_wall = time.monotonic()
    waiting = deque(range(len(jobs)))
    queued = ReadyQueue()  # episodes whose prompt is ready, waiting for a decode slot
    max_open = cfg.open_episodes or 2 * cfg.batch_size
    eps: dict[int, _Episode] = {}
    finished: dict[int, Trajectory] = {}
    work: dict = {}  # future -> (what, job index)
    asked: dict[int, float] = {}  # job index -> when its prompt was submitted
    bar = _progress(len(jobs), progress)
    meter = _forward_meter(policy, cfg)
    gen = make_generator(policy, cfg, sorted(stop))
    pool = ThreadPoolExecutor(max_workers=cfg.workers)
    clock = {"generating": 0.0, "waiting": 0.0, "last": time.perf_counter(), "busy": 0}

    def ready(i: int) -> None:
        """Episode i may speak: submit its prompt, or end it if it is done or no longer fits."""
        e = eps[i]
        if not e.state.done and not e.stream.fit(cfg.context_budget - cfg.max_new_tokens):
            e.state.finish("context")
        if e.state.done:
            work[pool.submit(_final_verify, e, limits)] = ("verify", i)
        else:
            queued.push(i, e.state.turn)

    try:
        with meter, gen:
            while waiting or eps or work:
                now = time.perf_counter()  # the last pass's wall: slots decoding, or all standing idle
                clock["generating" if clock["busy"] else "waiting"] += now - clock["last"]
                clock["last"] = now
                while waiting and len(eps) + sum(w == "open" for w, _ in work.values()) < max_open:
                    i = waiting.popleft()
                    work[pool.submit(_open_episode, jobs[i], cfg, tok, limits)] = ("open", i)
                while queued and gen.busy < cfg.batch_size:
                    i = queued.pop()
                    asked[i] = time.monotonic()
                    gen.submit(i, eps[i].stream.prompt_ids())
                for i, g in gen.poll(timeout=0.02 if work else 0.5):
                    e = eps[i]
                    e.timings["generate_s"] += time.monotonic() - asked.pop(i)
                    e.messages.append(Message("action", e.stream.add_action(g.token_ids, g.logprobs, stop)))
                    work[pool.submit(_act, e, limits)] = ("act", i)
                done, _ = wait(list(work), timeout=0) if work else (set(), None)
                for f in done:
                    what, i = work.pop(f)
                    result = f.result()  # re-raises a sandbox or verifier error here
                    if what == "open":
                        eps[i] = result
                        ready(i)
                    elif what == "act":
                        if result:
                            eps[i].stream.add_messages(result)
                            eps[i].messages += result
                        ready(i)
                    else:
                        finished[i] = _trajectory(eps.pop(i), cfg, policy_name, divisors, time.monotonic() - t_wall)
                        bar.update(1)
                if not work and not gen.busy and not waiting and not queued and eps:
                    raise RuntimeError("rollout stalled: live episodes with no pending work")
                clock["busy"] = gen.busy
        _account(clock, meter, gen, finished.values())
    finally:
        for f in work:
            f.cancel()
        pool.shutdown(wait=True)
        opened = [f.result() for f, (w, _) in work.items() if w == "open" and not f.cancelled() and not f.exception()]
        for e in [*eps.values(), *opened]:
            e.sandbox.close()
        bar.close()
    return [finished[i] for i in range(len(jobs))]


def _forward_meter(policy, cfg: RolloutConfig):
    """A `ForwardMeter` over the policy's model when transformers serves the replies (its forwards are ours to
    time); else nothing (a compiled or remote engine reports its own figures, `forward_stats`)."""
    from contextlib import nullcontext

    from ..policy.gen.dispatch import resolve_backend

    if resolve_backend(policy, cfg.generation_backend) == "transformers":
        return ForwardMeter(policy.model)
    return nullcontext()


def _account(clock: dict, meter, gen, trajs) -> None:
    """Add this rollout's wall phases and busy seconds to the process clock (`timing`)."""
    from ..timing import CLOCK

    CLOCK.add("rollout/generating", clock["generating"])
    CLOCK.add("rollout/waiting", clock["waiting"])
    stats = meter.summary() if hasattr(meter, "summary") else getattr(gen, "forward_stats", dict)()
    for key, name in (("forward_s", "rollout/forward"), ("prefill_tokens", "rollout/prefill_tokens"),
                      ("decode_tokens", "rollout/decode_tokens")):
        if key in stats:
            CLOCK.add(name, stats[key])
    for t in trajs:
        for key, name in (("open_s", "sandbox/open"), ("sandbox_s", "sandbox/commands"), ("verify_s", "sandbox/verifier"),
                          ("verifier_reused", "sandbox/verifier_reused")):
            CLOCK.add(name, t.timings.get(key, 0.0))


class ReadyQueue:
    """The continuous engine's episodes whose next prompt is ready, waiting for a decode slot.

    The one with the fewest turns taken goes first, then the one that became ready first. An episode that
    opens late (when another closes) would otherwise queue its first turn behind the later turns of older
    ones, and the run would end on a few such episodes speaking alone, turn after turn, in a mostly empty
    batch; served first, its later turns join the others'. On the rollout benchmark (48 episodes of 2 turns,
    16 slots, 32 open) it cut the forwards from 329 to 304-307 (three runs) for the same 4,082 tokens.
    """

    def __init__(self):
        self._heap: list = []
        self._count = 0

    def push(self, episode: int, turns: int) -> None:
        heapq.heappush(self._heap, (turns, self._count, episode))
        self._count += 1

    def pop(self) -> int:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)


def _act(e: _Episode, limits: SandboxLimits) -> list[Message]:
    """Let the harness act on the episode's last reply (commands run in its sandbox). Its seconds go to
    `sandbox_s`, those of a verifier run between turns (verifier-feedback harness) to `verify_s` only."""
    t, verified = time.monotonic(), e.timings["verify_s"]

    def verify():
        v0 = time.monotonic()
        rep = verify_sandbox(e.sandbox, e.task, limits=limits, memo=e.verdicts)
        e.timings["verify_s"] += time.monotonic() - v0
        return rep

    def run(command, timeout):
        try:
            return e.sandbox.exec(command, timeout=timeout)
        except SandboxError as err:  # this episode's own sandbox is gone (a verifier's error still propagates)
            e.lost = str(err)
            raise

    ran = e.state.commands_run
    try:
        new = e.harness.step(e.state, e.messages[-1].content, run, verify)
    except SandboxError:
        if not e.lost:
            raise
        e.state.finish("sandbox")  # it ends, failed; the other episodes go on
        new = []
    e.timings["sandbox_s"] += time.monotonic() - t - (e.timings["verify_s"] - verified)
    if e.verify_turns:  # this turn's verdict: verified anew only when a command may have changed the workspace
        last = e.turn_reports[-1] if e.turn_reports else None
        e.turn_reports.append(None if e.lost else verify() if e.state.commands_run > ran else last)
    return new


def _final_verify(e: _Episode, limits: SandboxLimits) -> None:
    t = time.monotonic()
    if e.lost:
        e.report = VerifierReport(strict=0, passed=0, failed=0, total=0, valid=False,
                                  reason=f"sandbox lost: {e.lost}")
    elif e.verify_turns and e.turn_reports and e.turn_reports[-1] is not None and e.verifier_mode == "fresh":
        e.report = e.turn_reports[-1]  # the workspace as the last command left it, verified already
    else:
        e.report = verify_sandbox(e.sandbox, e.task, limits=limits, mode=e.verifier_mode, memo=e.verdicts)
    e.timings["verify_s"] += time.monotonic() - t
    e.sandbox.close()


def _trajectory(e: _Episode, cfg: RolloutConfig, policy_name: str, divisors: dict, wall: float) -> Trajectory:
    segs = e.stream.segments
    ids, mask, lps, spans, pos = [], [], [], [], 0
    for s in segs:
        if s.kind == "action":
            spans.append([pos, pos + len(s.ids)])
        ids += s.ids
        mask += s.mask
        lps += s.logprobs
        pos += len(s.ids)
    rep = e.report.to_dict()
    d = divisors.get(e.task.family, DEFAULT_DIVISOR)
    rewards = {k: compute_reward(k, rep, divisor=d) for k in REWARDS}
    verdicts = [{k: r.to_dict()[k] for k in ("strict", "passed", "failed", "total", "valid")} if r is not None else None
                for r in e.turn_reports]
    turn_rewards = {k: [compute_reward(k, v, divisor=d) if v is not None else 0.0 for v in verdicts]
                    for k in REWARDS} if verdicts else {}
    generated = sum(mask)
    return Trajectory(
        task=e.task.name, task_path=str(e.task.path), suite=e.task.suite, family=e.task.family,
        difficulty=e.task.difficulty, harness=cfg.harness, action_format=cfg.action_format, policy=policy_name,
        seed=e.seed, system=e.stream.chat[0]["content"], messages=[m.to_dict() for m in e.messages],
        token_ids=ids, action_mask=mask, logprobs=lps, turn_spans=spans, finish_reason=e.state.finish_reason,
        turns=e.state.turn, verifier=rep, rewards=rewards,
        tokens={"prompt": len(ids) - generated, "generated": generated, "total": len(ids)},
        timings={**{k: round(v, 3) for k, v in e.timings.items()}, "run_wall_s": round(wall, 3),
                 "verifier_reused": e.verdicts.get("hits", 0)},
        context_cuts=e.stream.cuts, turn_verdicts=verdicts, turn_rewards=turn_rewards)


def _progress(total: int, show: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="episodes", disable=not show, leave=False)


def make_generator(policy, cfg: RolloutConfig, stop_ids: list[int]):
    """The continuous engine's generator on `cfg.generation_backend` (`policy.gen.dispatch`)."""
    from ..policy.gen.dispatch import make_generator as serve

    return serve(policy, cfg.generation_backend, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature,
                 top_p=cfg.top_p, stop_ids=stop_ids, seed=cfg.seed, max_concurrent=cfg.batch_size,
                 stop_pattern=BLOCK_CLOSED if cfg.stop_after_block and cfg.action_format == "bash" else None,
                 context_budget=cfg.context_budget, page_size=cfg.page_size, compute_type=cfg.compute_type)
