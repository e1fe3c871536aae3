"""The learning benchmark's verdicts and table (pure functions of its measured comparisons, `eval.paired.compare`):
what the issue asks of one method, seed and temperature (`verdicts`), the mean over seeds (`seed_means`), and
results.md (`markdown`). `rsi_lite.bench.learns` runs the benchmark and calls them."""

from __future__ import annotations


def verdicts(cmp: dict, *, train: bool, targets: dict) -> dict:
    """What the issue asks of one method, seed and temperature: the gain (overall at the training temperature, on
    the kinds with room at the others) outside its interval and at least its target, and no kind whose whole
    interval lies below 0."""
    part = cmp["all"] if train else cmp.get("room", cmp["all"])
    target = targets["train" if train else "room"]
    fell = [k for k, r in cmp["by_kind"].items() if r["high"] < 0]
    return {"measured_on": "all" if train else "room", "gain": part["delta"], "target": target,
            "outside_interval": part["low"] > 0, "meets_target": part["delta"] >= target and part["low"] > 0,
            "kinds_fallen": fell}


def seed_means(rows: list[dict]) -> list[dict]:
    """Per method and temperature: the mean over seeds of the measured gain (overall; on the kinds with room where
    there is a room figure), and how many seeds' gains are outside their intervals."""
    out = {}
    for r in rows:
        part = r.get("room", r["all"])
        m = out.setdefault((r["method"], r["temperature"]), {"method": r["method"], "temperature": r["temperature"],
                                                             "gains": [], "outside": 0})
        m["gains"].append(part["delta"])
        m["outside"] += int(part["low"] > 0)
    return [{**m, "mean_gain": sum(m["gains"]) / len(m["gains"]), "seeds": len(m["gains"])} for m in out.values()]


def markdown(doc: dict) -> str:
    """The results as the experiment log shows them."""
    pct = lambda x: f"{100 * x:+.1f}"  # noqa: E731
    lines = [f"Learnable kinds of the starting checkpoint ({len(doc['kinds'])}): " + "; ".join(doc["kinds"]), "",
             f"{doc['heldout_tasks']} held-out tasks, {doc['config']['samples']} episodes each per measurement.", "",
             "| method | seed | T | before | after | change [95% interval] | on the kinds with room | kinds fallen | "
             "wall s |", "|---|---:|---:|---:|---:|---|---|---|---:|"]
    for r in doc["rows"]:
        a, room = r["all"], r.get("room")
        room_cell = (f"{pct(room['delta'])} [{pct(room['low'])}, {pct(room['high'])}] ({len(room['kinds'])} kinds)"
                     if room else "-")
        lines.append(f"| {r['method']} | {r['seed']} | {r['temperature']} | {100 * a['before']:.1f} | "
                     f"{100 * a['after']:.1f} | {pct(a['delta'])} [{pct(a['low'])}, {pct(a['high'])}] | {room_cell} | "
                     f"{', '.join(r['verdict']['kinds_fallen']) or 'none'} | {r['wall_s']:.0f} |")
    lines += ["", "Per kind (change [95% interval], before -> after):", ""]
    for r in doc["rows"]:
        cells = [f"{k}: {pct(v['delta'])} [{pct(v['low'])}, {pct(v['high'])}] ({100 * v['before']:.0f} -> "
                 f"{100 * v['after']:.0f})" for k, v in r["by_kind"].items()]
        lines.append(f"- {r['method']} seed {r['seed']} T {r['temperature']}: " + "; ".join(cells))
    lines += ["", "Over the seeds (the gain measured: all kinds at the training temperature, the kinds with room at the others):",
              "", "| method | T | seeds | mean gain | seeds outside their interval |", "|---|---:|---:|---:|---:|"]
    for m in doc["means"]:
        lines.append(f"| {m['method']} | {m['temperature']} | {m['seeds']} | {pct(m['mean_gain'])} | {m['outside']} |")
    return "\n".join(lines) + "\n"
