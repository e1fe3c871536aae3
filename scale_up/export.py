"""verl's checkpoints in the kit's run layout, so `rsi-lite eval` and the next stage read a 27B run's actor as
they read a CPU run's (`rsi_lite.rundir`: `rsr-N/checkpoint/`, `rpr-N/actor/`).

verl saves an FSDP actor per rank (`global_step_K/actor/`); its model merger gathers it, and for a LoRA actor
writes the adapter alone (`TARGET/lora_adapter/`: adapter_config.json and adapter_model.safetensors, peft's
key names, the rank and alpha from the checkpoint's lora_train_meta.json):

    python -m verl.model_merger merge --backend fsdp --local_dir RUN/verl/rpr-1/global_step_20/actor \
        --target_dir RUN/verl/rpr-1/merged
    python -m scale_up.export RUN/verl/rpr-1/merged RUN/rpr-1/actor

`export_actor` checks that the adapter is one the kit's loader takes (`rsi_lite.policy.model`: peft's
`PeftModel.from_pretrained(base, dir, adapter_name="actor")`) and writes it in place atomically. The critic is
not exported: verl's is a full-weight value model (scale_up/configs/rsi_27b.yaml says why), the kit's a LoRA
adapter with a value head; critic inheritance between verl phases reads verl's own checkpoint
(`trainer.rsi_critic_from`, scale_up/trainer.py).

`export_rpr` and `export_rsr` (the cycle's `export` jobs) put a whole verl phase into its kit stage directory:
the adapter, verl's file-logger metrics renamed to the kit's glossary (`METRIC_NAMES`), and the PPO steps'
episodes, so `rsi-lite report` reads the phase as it reads a CPU run's.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from rsi_lite.records import read_jsonl, write_jsonl_atomic
from rsi_lite.rundir import StageDir

ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")
METRIC_NAMES = {"losses/clipfrac": "actor/pg_clipfrac", "losses/approx_kl": "actor/ppo_kl",
                "losses/explained_variance_before": "critic/vf_explained_var", "losses/policy": "actor/pg_loss",
                "losses/value": "critic/vf_loss", "returns/mean": "critic/returns/mean"}
"""The kit's metric glossary -> verl's names for the same quantity (what the report's curves read)."""


def find_adapter(source: str | Path) -> Path:
    """The adapter directory: `source` itself, or the merger's `source/lora_adapter`."""
    source = Path(source)
    for d in (source, source / "lora_adapter"):
        if all((d / f).is_file() for f in ADAPTER_FILES):
            return d
    raise FileNotFoundError(f"{source}: no LoRA adapter (adapter_config.json and adapter_model.safetensors, "
                            "here or in lora_adapter/); a full-weight actor is not a kit checkpoint")


def check_adapter(d: Path) -> dict:
    """The adapter's config, after checking that its tensors are LoRA weights under peft's names."""
    from safetensors import safe_open

    cfg = json.loads((d / "adapter_config.json").read_text())
    if cfg.get("peft_type", "LORA") != "LORA" or int(cfg.get("r", 0)) <= 0:
        raise ValueError(f"{d}/adapter_config.json: not a LoRA adapter ({cfg.get('peft_type')}, r={cfg.get('r')})")
    with safe_open(str(d / "adapter_model.safetensors"), "pt") as f:
        keys = list(f.keys())
    bad = [k for k in keys if ".lora_" not in k or ".default." in k]
    if not keys or bad:
        raise ValueError(f"{d}: tensors not under peft's LoRA names: {bad[:3] or 'none at all'}")
    return cfg


def export_actor(source: str | Path, dest: str | Path) -> Path:
    """Copy verl's merged LoRA actor to the kit's adapter directory `dest` (written beside it, then renamed)."""
    src, dest = find_adapter(source), Path(dest)
    cfg = check_adapter(src)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=dest.name + ".tmp"))
    for f in ADAPTER_FILES:
        shutil.copyfile(src / f, tmp / f)
    (tmp / "export.json").write_text(json.dumps({"from": str(Path(source).resolve()), "r": cfg["r"],
                                                 "lora_alpha": cfg.get("lora_alpha")}) + "\n")
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


# ---------------------------------------------------------------- a verl run into the kit's stage directory

def latest_step(verl_dir: str | Path) -> Path:
    """verl's newest checkpoint of a run (`global_step_N`, from its latest_checkpointed_iteration.txt)."""
    marker = Path(verl_dir) / "latest_checkpointed_iteration.txt"
    if not marker.is_file():
        raise FileNotFoundError(f"{marker}: missing (the verl job saved no checkpoint)")
    return Path(verl_dir) / f"global_step_{int(marker.read_text().strip())}"


def verl_metrics(verl_dir: str | Path) -> list[dict]:
    """verl's file logger's rows ({"step": k, "data": {...}}) as {"step": k, **data}, the last row of a step
    kept (a resumed job logs its step again)."""
    path = Path(verl_dir) / "metrics.jsonl"
    rows = {}
    for i, r in enumerate(read_jsonl(path) if path.is_file() else [], 1):
        if not isinstance(r, dict) or not isinstance(r.get("step"), int) or not isinstance(r.get("data"), dict):
            field = "step" if not isinstance(r, dict) or not isinstance(r.get("step"), int) else "data"
            raise ValueError(f"{path}: row {i}: field {field!r} missing or not "
                             f"{'an integer' if field == 'step' else 'an object'} (verl's file logger writes "
                             '{"step": k, "data": {...}})')
        rows[r["step"]] = {"step": r["step"], **r["data"]}
    return [rows[k] for k in sorted(rows)]


def kit_row(row: dict, trajs: list[dict], critic_only_below: int) -> dict:
    """One verl step's metrics in the kit's glossary (verl's own names kept beside them)."""
    k = row["step"]
    out = {**row, "phase": "calibration" if k < critic_only_below else "joint"}
    out.update({kit: row[v] for kit, v in METRIC_NAMES.items() if v in row})
    if trajs:
        successes = sum(bool(t.get("verifier", {}).get("strict")) for t in trajs)
        out.update({"success/mean": successes / len(trajs), "success/any": int(successes > 0), "episodes": len(trajs),
                    "tokens/generated": sum(t.get("tokens", {}).get("generated", 0) for t in trajs)})
    return out


def export_rpr(run: str, phase: str, verl_dir: str, critic_only_below: int = 5) -> dict:
    """RPR-N's verl run into the kit's rpr-N/: the merged adapter into actor/, critic.json naming verl's critic,
    each logged step into step-KKK/ (metrics.json in the kit's glossary, the episodes as trajectories.jsonl, DONE),
    metrics.jsonl, summary.json, and the stage's DONE last (what `rsi-lite report` and the next stage read); returns
    the summary."""
    stage = StageDir(Path(run) / phase)
    export_actor(Path(verl_dir) / "merged", stage / "actor")
    newest = latest_step(verl_dir)
    stage.write("critic.json", {"verl_checkpoint": str(newest / "critic"),
                                "note": "verl's full-weight value model; trainer.rsi_critic_from inherits it"})
    rows = []
    for row in verl_metrics(verl_dir):
        src = stage / "verl-trajectories" / f"step-{row['step']:03d}.jsonl"
        trajs = read_jsonl(src) if src.is_file() else []
        kit = kit_row(row, trajs, critic_only_below)
        step = stage.step(row["step"])
        step.path.mkdir(parents=True, exist_ok=True)
        write_jsonl_atomic(step / "trajectories.jsonl", trajs)
        step.write("metrics.json", kit)
        step.mark_done()
        rows.append(kit)
    write_jsonl_atomic(stage / "metrics.jsonl", rows)
    summary = {"steps": len(rows), "verl_run": str(verl_dir), "checkpoint": str(newest),
               "final": {k: rows[-1].get(k) for k in ("success/mean", "losses/clipfrac")} if rows else {}}
    stage.write("summary.json", summary)
    stage.mark_done()
    return summary


def export_rsr(run: str, phase: str, verl_dir: str) -> None:
    """RSR-N's SFT: the adapter into rsr-N/checkpoint/, verl's metrics into rsr-N/sft.json (the funnel's `sft`)."""
    stage = StageDir(Path(run) / phase)
    export_actor(Path(verl_dir) / "merged", stage / "checkpoint")
    rows = verl_metrics(verl_dir)
    stage.write("sft.json", {"trainer": "verl", "steps": len(rows), "verl_run": str(verl_dir),
                             "checkpoint": str(latest_step(verl_dir)), "last": rows[-1] if rows else {}})


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        raise SystemExit("usage: python -m scale_up.export MERGED_DIR KIT_ADAPTER_DIR")
    print(export_actor(args[0], args[1]))


if __name__ == "__main__":
    main()
