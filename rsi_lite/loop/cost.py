"""What each stage of a run cost, in `RUN/cost.json` (`CostBook`): generated tokens and sandbox seconds from the
stage's files (`stage_cost`), its wall across resumes, the time it stood stopped, CPU seconds and the share of the
machine it used (`cpu_seconds`), peak memory, and where the wall went (`timing.CLOCK`'s breakdown).

    book = CostBook(run / "cost.json")
    book.timed("RSR-1", run / "rsr-1", lambda: run_rsr(...))   # recorded once the stage has finished

A stage already finished before this attempt is not measured again; an interrupted attempt records its wall in
`attempts_s` before it unwinds, and the attempt that finishes the stage adds them up.
"""

from __future__ import annotations

import gc
import os
import resource
from pathlib import Path

from ..records import write_json_atomic
from ..rollout.trajectory import read_trajectories
from ..rundir import StageDir
from ..timing import CLOCK, Stopwatch


def _reset_peak_rss() -> bool:
    try:  # Linux: writing 5 resets VmHWM, so each stage gets its own peak
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def cpu_seconds() -> dict:
    """CPU seconds (user + system) so far: this process's threads (`process`), its waited-for children's
    (`children`: a sandbox's processes count only where its own init waited for them, so most of a sandbox's
    commands and verifiers do not), and the whole machine's busy time (`machine`, from /proc/stat: on an otherwise
    idle machine, what the stage and its sandboxes used; absent where /proc/stat is not)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {"process": own.ru_utime + own.ru_stime, "children": kids.ru_utime + kids.ru_stime}
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        user, nice, system, _idle, _iowait, irq, softirq, steal = fields
        out["machine"] = (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        pass
    return out


def _peak_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # process peak (KiB on Linux)


def stage_files(d: Path) -> list[Path]:
    """The trajectory files of a stage directory (rsr, rpr or eval)."""
    return [p for p in [d / "discovery.jsonl", d / "resolves.jsonl", d / "trajectories.jsonl"] if p.is_file()] + \
        StageDir(d).trajectory_files()


def stage_cost(d: Path) -> dict:
    """Generated tokens and sandbox seconds (agent commands + verifier), from the stage's files."""
    tokens, sandbox, episodes = 0, 0.0, 0
    for f in stage_files(d):
        for t in read_trajectories(f):
            tokens += t.tokens.get("generated", 0)
            sandbox += t.timings.get("sandbox_s", 0.0) + t.timings.get("verify_s", 0.0)
            episodes += 1
    return {"generated_tokens": tokens, "sandbox_s": round(sandbox, 1), "episodes": episodes}


class CostBook:
    """A run's cost.json: one entry per stage label, written (atomically) after each stage attempt."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.entries: dict = StageDir(self.path.parent).read(self.path.name, {})

    def _write(self) -> None:
        write_json_atomic(self.path, self.entries)

    def timed(self, name: str, d: Path, fn):
        """Run one stage (`fn`, writing into `d`); record its cost (tokens and sandbox time from its files, wall
        time and peak memory) unless it had already finished before this attempt. An attempt that is interrupted
        (an exception, Ctrl-C, or SIGTERM under `rsi-lite run`) records its wall in `attempts_s` before it
        unwinds, and the attempt that finishes the stage adds them up: `wall_s` is the stage's wall across
        resumes."""
        fresh = not StageDir(d).done
        resumed = fresh and d.is_dir() and any(d.iterdir())
        earlier = list(self.entries.get(name, {}).get("attempts_s", [])) if fresh else []
        _reset_peak_rss()
        CLOCK.reset()
        sw, c0 = Stopwatch(), cpu_seconds()
        try:
            out = fn()
        except BaseException:
            if fresh:
                wall = sw.read()[0]
                self.entries[name] = {"generated_tokens": 0, "sandbox_s": 0.0, "episodes": 0, "wall_s": None,
                                      "paused_s": None, "peak_rss_mb": None, "attempts_s": earlier + [round(wall, 1)],
                                      "note": "interrupted: unfinished; attempts_s holds each attempt's wall"}
                self._write()
            raise
        gc.collect()
        wall, paused = sw.read()
        if fresh or name not in self.entries:
            row = {**stage_cost(d), "wall_s": round(wall + sum(earlier), 1) if fresh else None,
                   "paused_s": round(paused, 1) if fresh else None,
                   "peak_rss_mb": round(_peak_rss_mb(), 1) if fresh else None}
            if earlier:
                row["attempts_s"] = earlier + [round(wall, 1)]
            if fresh:
                row["breakdown"] = CLOCK.snapshot(wall)
                cpu = {k: v - c0[k] for k, v in cpu_seconds().items()}
                row["cpu_s"] = {k: round(v, 1) for k, v in cpu.items()}
                # the machine's busy time counts what ran while this process stood stopped: a paused stage's
                # share is its own process's and children's
                busy = cpu["process"] + cpu["children"] if paused > 0 else cpu.get("machine", cpu["process"] + cpu["children"])
                row["cpu_share"] = round(busy / wall, 2) if wall > 0 else None
            if resumed:
                row["note"] = ("resumed: wall_s is the attempts' walls added up (attempts_s, where they were "
                               "recorded); peak memory, CPU and breakdown of the attempt that finished it")
            self.entries[name] = row
            self._write()
        return out
