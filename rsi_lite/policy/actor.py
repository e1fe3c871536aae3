"""The actor as a stage loads and saves it: a fresh adapter on the base model, or a saved one.

Every stage (self-rewrite, refinement, the loop, `scale_up/`) calls these, so none imports another stage for
its plumbing.
"""

from __future__ import annotations

from pathlib import Path

BUNDLED = "smollm2-135m"


def load_actor(init: str, quantization: str = "lora", model: str = BUNDLED, dtype: str = "float32"):
    """The actor: a fresh adapter on `model` (`init == "base"`), or the saved adapter in directory `init`."""
    from .model import PolicyConfig, load_policy

    cfg = PolicyConfig(model=model, quantization=quantization, dtype=dtype)
    if init == "base":
        return load_policy(cfg)
    if not (Path(init) / "adapter_config.json").is_file():
        raise FileNotFoundError(f"{init}/adapter_config.json: missing (a stage's init is 'base' or a saved adapter)")
    return load_policy(cfg, adapter_path=init)


def save_actor(policy, path: Path) -> Path:
    """Save the actor adapter so that `path/adapter_config.json` exists (written to a temp dir, then renamed)."""
    from .model import save_adapter

    return save_adapter(policy, "actor", path)
