"""Batched multi-turn episodes: harness + policy + sandbox + verifier -> Trajectory records.

The engine batches continuously. Up to `batch_size` replies decode at once; an episode's
reply joins the running batch as soon as its prompt is ready and a slot is free, and leaves
it when finished; its command then runs in its sandbox (a worker thread) while the others
keep decoding. Up to `open_episodes` (default twice `batch_size`) episodes are open, so a
freed slot is refilled at once by an episode whose prompt is ready instead of idling while
commands run; of the ready prompts, the episode with the fewest turns taken speaks first
(`ReadyQueue`). No episode waits for the slowest row of a turn, and the shared prompt prefix
is computed once (see `policy.gen.hf_continuous`).
Each finished episode becomes one Trajectory (one JSON line).

Tokens, segments and the context budget: see `trajectory`.
"""

from __future__ import annotations

import heapq
import re
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field

from ..algos.rewards import DEFAULT_DIVISOR, REWARDS, compute_reward
from ..harness.harnesses import HarnessState, make_harness
from ..harness.messages import Message
from ..policy.gen.hf_continuous import ForwardMeter
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
    """Replies decoded at once; the rest wait for a free place. On 2 cores 32 slots generate more tokens per
    second than 16, and 64 no more than 32 (`python -m rsi_lite.bench.rollout --runs engine --batch B`;
    docs/experiments.md, "Figures behind the code's choices")."""
    open_episodes: int = 0
    """Episodes open at once (each holds a sandbox). 0: twice `batch_size`, so that while some
    episodes run commands or their verifier, others have their next prompt ready for every decode slot
    that frees. With `batch_size` 1 and `open_episodes` 1, one episode at a time."""
    page_size: int = 64
    """Tokens per KV-cache page. Only whole pages are shared between prompts, so each turn
    computes again the partial page its previous prompt and reply ended on. Smaller pages compute less of
    that, yet 16 ran slower than 64 on the CPU (`python -m rsi_lite.bench.rollout --page-size`, README)."""
    engine: str = "continuous"
    """Always 'continuous', the one engine. The field stays because the config.json of earlier runs names it and
    must still load; the lockstep engine it once chose is retired, and naming it is an error."""
    generation_backend: str = "auto"
    """What serves the replies, 'native', 'transformers', 'ctranslate2' (compiled CPU engine, the actor's
    weights merged and converted when they change), 'vllm' (GPUs, scale_up/), 'remote' (servers of vLLM's
    completions API elsewhere, scale_up/) or 'auto' (vLLM or remote for a policy served so, else native where it
    serves the model, else transformers: `policy.gen.dispatch` says why)."""
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

    def __post_init__(self):
        if self.engine != "continuous":
            raise ValueError(f"RolloutConfig.engine: {self.engine!r}; the only engine is 'continuous' (the lockstep "
                             "engine was retired; drop the field or set it to 'continuous')")

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
    return _run_continuous(policy, jobs, cfg, policy_name, reward_divisors or {}, progress)


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
    run = _ContinuousRun(policy, jobs, cfg, policy_name, divisors, progress)
    try:
        with run.meter, run.gen:
            while run.waiting or run.eps or run.work:
                run.count_last_pass()
                run.open_episodes()
                run.submit_prompts()
                run.take_replies()
                run.take_sandbox_results()
                run.end_pass()
        _account(run.clock, run.meter, run.gen, run.finished.values())
    finally:
        run.close()
    return [run.finished[i] for i in range(len(jobs))]


class _ContinuousRun:
    """One call of the continuous engine: its episodes, the work in flight, and the steps of one pass of its loop.

    No step of a pass blocks for long (only the poll waits, briefly), so a slow command or verifier never
    holds up the decoding of the other episodes' replies.
    """

    def __init__(self, policy, jobs: list[tuple], cfg: RolloutConfig, policy_name: str, divisors: dict,
                 progress: bool):
        self.jobs, self.cfg, self.policy_name, self.divisors = jobs, cfg, policy_name, divisors
        self.tok, self.stop = policy.tokenizer, stop_token_ids(policy.tokenizer)
        self.limits = SandboxLimits(command_timeout=cfg.command_timeout)
        self.t_wall = time.monotonic()
        self.waiting = deque(range(len(jobs)))  # jobs not opened yet
        self.queued = ReadyQueue()  # episodes whose prompt is ready, waiting for a decode slot
        self.max_open = cfg.open_episodes or 2 * cfg.batch_size
        self.eps: dict[int, _Episode] = {}
        self.finished: dict[int, Trajectory] = {}
        self.work: dict = {}  # future -> (what, job index)
        self.asked: dict[int, float] = {}  # job index -> when its prompt was submitted
        self.bar = _progress(len(jobs), progress)
        self.meter = _forward_meter(policy, cfg)
        self.sampler = sampler_record(policy, cfg)
        self.gen = make_generator(policy, cfg, sorted(self.stop), cache_slots=self.max_open + 1)
        self.pool = ThreadPoolExecutor(max_workers=cfg.workers)
        self.clock = {"generating": 0.0, "waiting": 0.0, "last": time.perf_counter(), "busy": 0}

    def count_last_pass(self) -> None:
        """The last pass's wall goes to generating if slots were decoding, else to waiting (all stood idle)."""
        now = time.perf_counter()
        self.clock["generating" if self.clock["busy"] else "waiting"] += now - self.clock["last"]
        self.clock["last"] = now

    def open_episodes(self) -> None:
        """Open waiting jobs' episodes (sandboxes) until `max_open` are open or opening."""
        opening = sum(w == "open" for w, _ in self.work.values())
        while self.waiting and len(self.eps) + opening < self.max_open:
            i = self.waiting.popleft()
            self.work[self.pool.submit(_open_episode, self.jobs[i], self.cfg, self.tok, self.limits)] = ("open", i)
            opening += 1

    def submit_prompts(self) -> None:
        """Give each free decode slot the next ready prompt (`ReadyQueue`'s order)."""
        while self.queued and self.gen.busy < self.cfg.batch_size:
            i = self.queued.pop()
            self.asked[i] = time.monotonic()
            self.gen.submit(i, self.eps[i].stream.prompt_ids())

    def take_replies(self) -> None:
        """Record each finished reply as its episode's action and hand it to the sandboxes to act on."""
        for i, g in self.gen.poll(timeout=0.02 if self.work else 0.5):
            e = self.eps[i]
            e.timings["generate_s"] += time.monotonic() - self.asked.pop(i)
            e.messages.append(Message("action", e.stream.add_action(g.token_ids, g.logprobs, self.stop)))
            self.work[self.pool.submit(_act, e, self.limits)] = ("act", i)

    def take_sandbox_results(self) -> None:
        """Step each episode whose sandbox work is done: opened, acted on its reply, or verified."""
        done, _ = wait(list(self.work), timeout=0) if self.work else (set(), None)
        for f in done:
            what, i = self.work.pop(f)
            result = f.result()  # re-raises a sandbox or verifier error here
            if what == "open":
                self.eps[i] = result
                self._ready(i)
            elif what == "act":
                self._observe(i, result)
                self._ready(i)
            else:
                self._finish(i)

    def end_pass(self) -> None:
        """Stop a run that can no longer move; note whether slots are decoding, for the next pass's clock."""
        if not self.work and not self.gen.busy and not self.waiting and not self.queued and self.eps:
            raise RuntimeError("rollout stalled: live episodes with no pending work")
        self.clock["busy"] = self.gen.busy

    def _observe(self, i: int, new: list[Message]) -> None:
        if new:
            self.eps[i].stream.add_messages(new)
            self.eps[i].messages += new

    def _ready(self, i: int) -> None:
        """Episode i may speak: queue its prompt, or verify it if it is done or no longer fits."""
        e = self.eps[i]
        if not e.state.done and not e.stream.fit(self.cfg.context_budget - self.cfg.max_new_tokens):
            e.state.finish("context")
        if e.state.done:
            getattr(self.gen, "release", lambda key: None)(i)  # a generator that keeps episodes' caches frees this one
            self.work[self.pool.submit(_final_verify, e, self.limits)] = ("verify", i)
        else:
            self.queued.push(i, e.state.turn)

    def _finish(self, i: int) -> None:
        """Episode i is verified: its trajectory is final."""
        wall = time.monotonic() - self.t_wall
        self.finished[i] = _trajectory(self.eps.pop(i), self.cfg, self.policy_name, self.divisors, wall, self.sampler)
        self.bar.update(1)

    def close(self) -> None:
        """Cancel the work not started, wait for the rest, and close every sandbox still open."""
        for f in self.work:
            f.cancel()
        self.pool.shutdown(wait=True)
        opened = [f.result() for f, (w, _) in self.work.items()
                  if w == "open" and not f.cancelled() and not f.exception()]
        for e in [*self.eps.values(), *opened]:
            e.sandbox.close()
        self.bar.close()


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
                      ("decode_tokens", "rollout/decode_tokens"), ("forwards", "rollout/forwards"),
                      ("decode_forwards", "rollout/decode_forwards"), ("pack_s", "model/serve")):
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
    batch; served first, its later turns join the others'. Fewer forwards for the same tokens on the rollout
    benchmark (docs/history.md).
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


def sampler_record(policy, cfg: RolloutConfig) -> dict:
    """`Trajectory.sampler`: the backend that serves the replies (`policy.gen.dispatch.resolve_backend`) and the
    sampling settings the recorded log-probabilities are of."""
    from ..policy.gen.dispatch import resolve_backend

    backend = resolve_backend(policy, cfg.generation_backend)
    return {"backend": backend, "temperature": cfg.temperature, "top_p": cfg.top_p,
            **({"compute_type": cfg.compute_type} if backend == "ctranslate2" else {})}


def _trajectory(e: _Episode, cfg: RolloutConfig, policy_name: str, divisors: dict, wall: float,
                sampler: dict | None = None) -> Trajectory:
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
        context_cuts=e.stream.cuts, turn_verdicts=verdicts, turn_rewards=turn_rewards, sampler=dict(sampler or {}))


def _progress(total: int, show: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="episodes", disable=not show, leave=False)


def make_generator(policy, cfg: RolloutConfig, stop_ids: list[int], cache_slots: int = 0):
    """The continuous engine's generator on `cfg.generation_backend` (`policy.gen.dispatch`); `cache_slots`: the
    episodes open at once, each of which keeps its cache between turns where the generator keeps caches."""
    from ..policy.gen.dispatch import make_generator as serve

    return serve(policy, cfg.generation_backend, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature,
                 top_p=cfg.top_p, stop_ids=stop_ids, seed=cfg.seed, max_concurrent=cfg.batch_size,
                 stop_pattern=BLOCK_CLOSED if cfg.stop_after_block and cfg.action_format == "bash" else None,
                 context_budget=cfg.context_budget, page_size=cfg.page_size, compute_type=cfg.compute_type,
                 cache_slots=cache_slots)
