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
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


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


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        raise SystemExit("usage: python -m scale_up.export MERGED_DIR KIT_ADAPTER_DIR")
    print(export_actor(args[0], args[1]))


if __name__ == "__main__":
    main()
