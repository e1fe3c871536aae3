"""The wall clock that says where a stage's time went. Run: pytest tests/test_timing.py"""

import time

from rsi_lite.timing import WALL_PHASES, WallClock


def test_phases_add_up_and_other_is_the_rest_of_the_wall():
    c = WallClock()
    t0 = time.perf_counter()
    with c.phase("model/load"):
        time.sleep(0.05)
    c.add("rollout/generating", 0.2)
    c.add("sandbox/commands", 5.0)  # busy seconds of worker threads: not part of the wall's sum
    c.add("rollout/decode_tokens", 12)
    wall = time.perf_counter() - t0 + 0.2
    snap = c.snapshot(wall)
    assert snap["rollout/decode_tokens"] == 12 and isinstance(snap["rollout/decode_tokens"], int)
    assert snap["sandbox/commands"] == 5.0
    assert abs(snap["model/load"] + snap["rollout/generating"] + snap["other"] - wall) < 0.1
    assert "sandbox/commands" not in WALL_PHASES


def test_a_snapshot_since_an_earlier_reading_counts_only_what_came_after():
    c = WallClock()
    c.add("train/ppo", 3.0)
    before = c.raw()
    c.add("train/ppo", 1.5)
    c.add("model/serve", 0.5)
    assert c.snapshot(since=before) == {"train/ppo": 1.5, "model/serve": 0.5}
    assert c.snapshot(wall=2.5, since=before)["other"] == 0.5
    c.reset()
    assert c.snapshot() == {}


_CHILD = """
import sys, time
from rsi_lite.timing import PauseWatch
w = PauseWatch(tick=0.05, threshold=0.5).start()
print("ready", flush=True)
t0 = time.monotonic()
if sys.argv[1] == "busy":  # one C call that holds the GIL for seconds: the watch wakes late, yet CPU was used
    while time.monotonic() - t0 < 3.0:
        sum(range(100_000_000))
else:
    time.sleep(4.0)
print(round(w.total(), 2), flush=True)
"""


def _child(mode: str, stop_s: float = 0.0) -> float:
    import os
    import signal
    import subprocess
    import sys

    from .conftest import REPO

    p = subprocess.Popen([sys.executable, "-c", _CHILD, mode], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.stdout.readline().strip() == "ready"
    if stop_s:
        time.sleep(0.5)
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(stop_s)
        os.kill(p.pid, signal.SIGCONT)
    out, _ = p.communicate(timeout=60)
    return float(out.strip())


def test_the_pause_watch_counts_a_stopped_process_and_not_a_busy_one():
    """SIGSTOP for 2 s: about 2 s counted; a process that kept the watch from waking for seconds by holding the
    GIL, but used its CPU all along: nothing."""
    assert 1.7 <= _child("sleep", stop_s=2.0) <= 2.4
    assert _child("busy") == 0.0


def test_a_compiled_engines_weight_refresh_is_the_stages_model_serve():
    """The native engine's repack of new actor weights (`stats['pack_s']`, at the generator's open, before the
    rollout's clock starts) lands in `model/serve`, a wall phase, not in `other`."""
    from types import SimpleNamespace

    from rsi_lite.rollout.engine import _account
    from rsi_lite.timing import CLOCK

    before = CLOCK.raw()
    gen = SimpleNamespace(forward_stats=lambda: {"forward_s": 1.0, "decode_tokens": 8, "pack_s": 0.5})
    _account({"generating": 2.0, "waiting": 0.5}, None, gen, [])
    snap = CLOCK.snapshot(wall=3.5, since=before)
    assert snap["model/serve"] == 0.5 and snap["rollout/forward"] == 1.0
    assert snap["other"] == 0.5  # 3.5 - (2.0 generating + 0.5 waiting + 0.5 serving)
