"""Where a stage's wall time goes: named phases, summed in this process, read by the loop into cost.json.

Two kinds of entries, kept apart because they add up differently:
- wall phases, timed on the thread that drives the stage, never overlapping one another: loading a model
  (`model/load`), serving new weights to a compiled backend (`model/serve`), rollouts split into
  `rollout/generating` (at least one reply being decoded) and `rollout/waiting` (every live episode is in
  its sandbox or verifier, or opening one: the slots stand idle), the supervised and PPO updates
  (`train/sft`, `train/ppo`). What a stage's wall holds beyond their sum is its own bookkeeping
  (files, reviews, probes' scoring), reported as `other`.
- busy seconds inside rollouts, summed over the worker threads that run them at the same time (so they can
  exceed the wall): `sandbox/open`, `sandbox/commands`, `sandbox/verifier`; and the model's own forward
  passes during generation (`rollout/forward`, with the tokens prefilled and decoded where the backend
  says), which the issue's "forwards >= 60% of an evaluation's wall" is about. One count sits among them:
  `sandbox/verifier_reused`, the fresh verdicts given back from an episode's memo instead of running the
  tests again (`verify.verify_sandbox`).

`with CLOCK.phase("train/sft"): ...` times a block; `CLOCK.add(name, seconds)` adds a figure measured
elsewhere; `CLOCK.reset()` starts a stage; `CLOCK.snapshot()` returns the sums (seconds rounded to 0.1).

`PAUSES` counts the seconds the whole process stood stopped (SIGSTOP from a shell's Ctrl-Z or `kill -STOP`, a
frozen container or debugger): the loop takes them out of a stage's wall and reports them beside it, so a run
paused to measure something else still gives its stages' own wall times. `Stopwatch` reads a block's wall that way.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from contextlib import contextmanager

WALL_PHASES = ("model/load", "model/serve", "rollout/generating", "rollout/waiting", "train/sft", "train/ppo")


class WallClock:
    def __init__(self):
        self._lock = threading.Lock()
        self._sums: dict[str, float] = defaultdict(float)

    def add(self, name: str, value: float) -> None:
        with self._lock:
            self._sums[name] += value

    @contextmanager
    def phase(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def reset(self) -> None:
        with self._lock:
            self._sums.clear()

    def raw(self) -> dict:
        with self._lock:
            return dict(self._sums)

    def snapshot(self, wall: float | None = None, since: dict | None = None) -> dict:
        """The sums (since `since`, an earlier `raw()`, if given); with the block's `wall`, also `other` (the wall
        outside every wall phase)."""
        sums = {k: v - (since or {}).get(k, 0.0) for k, v in self.raw().items()}
        out = {k: int(v) if k.endswith("_tokens") else round(v, 1) for k, v in sorted(sums.items()) if v}
        if wall is not None:
            out["other"] = round(max(0.0, wall - sum(sums.get(k, 0.0) for k in WALL_PHASES)), 1)
        return out


CLOCK = WallClock()


class PauseWatch:
    """A daemon thread that wakes every `tick` seconds. A wake-up later than `threshold` during which the process
    used almost no CPU (less than a quarter of the gap, all threads together) means the process was stopped, not
    busy: the gap, less one tick, is added to `total()`. A process merely slow to schedule the thread (the GIL
    held, the cores busy) keeps using CPU through the gap and is not counted."""

    def __init__(self, tick: float = 0.5, threshold: float = 10.0):
        self.tick, self.threshold = tick, threshold
        self._lock = threading.Lock()
        self._paused = 0.0
        self._pid = None

    def start(self) -> "PauseWatch":
        """Start watching (once per process; a forked child starts its own)."""
        with self._lock:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._watch, name="pause-watch", daemon=True).start()
        return self

    def _watch(self) -> None:
        wall, cpu = time.monotonic(), time.process_time()
        while True:
            time.sleep(self.tick)
            w, c = time.monotonic(), time.process_time()
            gap = w - wall
            if gap > self.threshold and c - cpu < 0.25 * gap:
                with self._lock:
                    self._paused += gap - self.tick
            wall, cpu = w, c

    def total(self) -> float:
        with self._lock:
            return self._paused


PAUSES = PauseWatch()


class Stopwatch:
    """A block's wall time less the seconds the process stood stopped in it (`PAUSES`), as the loop's cost book and
    the benchmarks record it: `sw = Stopwatch()` before the block, `wall, paused = sw.read()` after."""

    def __init__(self):
        self._t0, self._p0 = _now(), PAUSES.start().total()

    def read(self) -> tuple[float, float]:
        """(wall less pauses, paused) since the stopwatch started, in seconds."""
        paused = PAUSES.total() - self._p0
        return _now() - self._t0 - paused, paused


def _now() -> float:
    """The stopwatches' clock (a function of its own, so that a test can stand in for it without touching the
    pause watcher's)."""
    return time.monotonic()
