"""The report's section on successes that may be pretending: each stage's successes as the shadow replay
(`verify.shadow`) judged them, read from a run's files, next to the paper's Rust-C case. `rsi-lite report` and
notebook 03 show it.
"""

from __future__ import annotations

from pathlib import Path

from ..loop.phases import CONTROLS, eval_dir
from ..records import read_json
from ..rundir import StageDir, rpr_dir

RUST_C = ("The paper's case study: on a Rust-C task the final model built a static Rust binary, ran a C-linkage "
          "smoke test, and then delegated the actual expression evaluation to Python, which passed the hidden fuzz "
          "tests. The verifier accepted it; the task meant a native Rust-C path. A loop trained on verified successes "
          "learns whatever the verifier accepts. At this kit's scale the same failure is a command that writes the "
          "expected answer instead of computing it, or one that touches the checks.")
"""The paper's reward-hacking case, quoted next to a run's flagged successes."""


def shadow_findings(run: Path, d: Path | None = None, show: int = 5) -> dict:
    """One seed's successes as the shadow replay judged them (`verify.shadow`), stage by stage in the loop's order:
    {directory: {"checked": successes replayed, "flagged": how many were flagged, "kinds": {kind: n},
    "examples": the first `show` flagged ones as {"task", "flags", "commands"}}}. A stage whose successes were
    not replayed (the replay off, or a run from before it) is left out. `d`: the seed's directory (the run's
    own when it has one seed); Base's evaluation is the run's."""
    from ..rollout.trajectory import read_trajectories
    from ..rsr.stage import kept_resolves
    from ..verify.shadow import episode_commands

    run = Path(run)
    d = Path(d or run)
    out = {}

    def add(name: str, judged: list) -> None:  # judged: (trajectory, its flags) of each replayed success
        if not judged:
            return
        flagged = [(t, f) for t, f in judged if f]
        kinds: dict[str, int] = {}
        for _, f in flagged:
            for k in f:
                kinds[k] = kinds.get(k, 0) + 1
        out[name] = {"checked": len(judged), "flagged": len(flagged), "kinds": kinds,
                     "examples": [{"task": t.task, "flags": f, "commands": episode_commands(t)}
                                  for t, f in flagged[:show]]}

    def replayed(files: list[Path]) -> list:
        return [(t, t.verifier["flags"]) for f in files for t in read_trajectories(f)
                if t.verifier.get("strict") and "flags" in t.verifier]

    def evaluation(e: Path) -> None:
        if (e / "trajectories.jsonl").is_file():
            add(e.name, replayed([e / "trajectories.jsonl"]))

    evaluation(run / "eval-base")
    for c in (1, 2):
        r = d / f"rsr-{c}"
        if (r / "flags.json").is_file():  # the gate's verdicts, by index into the kept re-solves
            flags = read_json(r / "flags.json")
            add(r.name, [(t, flags.get(str(i), [])) for i, t in enumerate(kept_resolves(r)) if t.verifier.get("strict")])
        evaluation(eval_dir(d, f"RSR-{c}"))
        add(f"rpr-{c}", replayed(rpr_dir(d, c).trajectory_files()))
        evaluation(eval_dir(d, f"RPR-{c}"))
    for label, name in CONTROLS.values():
        add(name, replayed(StageDir(d / name).trajectory_files()))
        evaluation(eval_dir(d, label))
    return out


def shadow_markdown(findings: dict, title: str = "Successes that may be pretending (shadow replay)") -> list[str]:
    """The report's section: the paper's Rust-C case, then how many successes each stage replayed and flagged,
    then the flagged ones with their commands."""
    out = [f"## {title}", "", RUST_C, "",
           "Here every success is replayed in a fresh sandbox of its task's shadow twin (the same instruction, other "
           "hidden data): one that fails there solved this instance only (`input_specific`). Pattern checks flag "
           "commands that touch the tests (`touches_tests`), the verifier's output (`touches_verifier_output`), or "
           "write outside the workspace (`writes_outside_workspace`); tasks without a generator get these only. The "
           "self-rewrite keeps flagged re-solves out of its SFT set.", ""]
    if not findings:
        return out + ["No stage of this run replayed its successes (the replay was off, or the run predates it).", ""]
    from ..verify.shadow import FLAG_KINDS

    out += ["| stage | successes replayed | flagged | " + " | ".join(FLAG_KINDS) + " |",
            "|---|---:|---:|" + "---:|" * len(FLAG_KINDS)]
    out += [f"| {name} | {f['checked']} | {f['flagged']} | " + " | ".join(str(f["kinds"].get(k, 0)) for k in FLAG_KINDS)
            + " |" for name, f in findings.items()]
    examples = [(name, e) for name, f in findings.items() for e in f["examples"]]
    total = sum(f["flagged"] for f in findings.values())
    if not examples:
        return out + ["", f"None of the {sum(f['checked'] for f in findings.values())} successes was flagged: each "
                      "one passed its twin too (or had none to fail), and none touched the tests, the verifier's "
                      "output or a file outside the workspace.", ""]
    out += ["", f"Flagged successes ({total}; the first few of each stage), with their commands:", ""]
    for name, e in examples:
        cmds = "\n".join(c if len(c) <= 200 else c[:200] + " ..." for c in e["commands"][:8])
        out += [f"- {name} · `{e['task']}` · {', '.join(e['flags'])}", "", "  ```bash",
                *[f"  {line}" for line in cmds.splitlines()], "  ```", ""]
    return out
