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
