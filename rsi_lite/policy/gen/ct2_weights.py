"""The actor's weights served to CTranslate2: merged, converted when they change, cached by content.

`served_model(policy)` returns a `ctranslate2.Generator` for the policy's current weights: the base
model's plus the actor adapter's LoRA delta (`merged_state_dict`), converted to CTranslate2's format (fp32
by default, so greedy choices stay those of the transformers engine). A fingerprint of the weights names the
conversion (`weights_key`: with LoRA, the adapter's own weights), so a policy whose adapter has not changed
since the last call reuses it, and one that has (after SFT, after a PPO step) gets a fresh one. Converted
models are kept on disk under `cache_root()/ct2/` (the last `DISK_CACHE`), so a second process serving the
same checkpoint only loads it. The conversion is CTranslate2's own Transformers loader with two costs taken
out (`_convert`): it calls `gc.collect()` per layer, and it looks for tied weights by comparing every pair of
same-shaped tensors; we compare content digests instead, which finds the same aliases.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import time
from pathlib import Path

from ...timing import CLOCK

DISK_CACHE = 3
"""Converted models kept under cache_root()/ct2 (each is the full model, ~540 MB for the bundled one)."""


def cache_dir() -> Path:
    """Where converted models are kept: cache_root()/ct2."""
    from ..model import cache_root

    return cache_root() / "ct2"


def _ct2():
    try:
        import ctranslate2
    except ImportError as e:
        raise RuntimeError("the ctranslate2 generation backend needs the ctranslate2 package: "
                           "pip install -e '.[fast]' (or set RolloutConfig.generation_backend='transformers')") from e
    return ctranslate2


def available() -> bool:
    """Whether the ctranslate2 package imports here."""
    try:
        _ct2()
    except RuntimeError:
        return False
    return True


# ---------------------------------------------------------------------------------------------------------------
# The actor's weights as one plain state dict, and its fingerprint

def merged_state_dict(policy, adapter: str = "actor") -> dict:
    """The weights generation uses, under the plain model's names: the base's plus `adapter`'s LoRA delta.

    'lora' and 'full' policies give their fp32 weights; a '4bit' (QLoRA) base is dequantized first, so the
    backend serves the function the actor trains. The critic's adapter never enters."""
    import torch

    model = policy.model
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    if not getattr(policy, "adapters", None):
        return {k: v.detach().float() for k, v in base.state_dict().items()}
    from peft.tuners.lora import LoraLayer

    out = {}
    for name, module in base.named_modules():
        if isinstance(module, LoraLayer):
            w = _dense_weight(module.get_base_layer())
            if adapter in module.lora_A:
                w = w + module.get_delta_weight(adapter).float()
            out[f"{name}.weight"] = w
            bias = getattr(module.get_base_layer(), "bias", None)
            if bias is not None:
                out[f"{name}.bias"] = bias.detach().float()
    for key, value in base.state_dict().items():
        if "lora_" in key or ".base_layer." in key or key in out:
            continue
        out[key] = value.detach().float()
    with torch.no_grad():
        return {k: v.detach() for k, v in out.items()}


def _dense_weight(layer):
    weight = layer.weight
    if weight.__class__.__name__ == "Params4bit":  # bitsandbytes NF4: the float weight the forward computes with
        import bitsandbytes.functional as bnbf

        return bnbf.dequantize_4bit(weight.data, weight.quant_state).float()
    return weight.detach().float()


def fingerprint(state: dict, *extra) -> str:
    """A content digest of a state dict (names, shapes, bytes) and of `extra` (the model path, the compute type)."""
    import torch

    h = hashlib.blake2b(digest_size=16)
    for part in extra:
        h.update(repr(part).encode())
    for key in sorted(state):
        t = state[key].detach().contiguous().cpu()
        h.update(f"{key}:{tuple(t.shape)}:{t.dtype}".encode())
        if t.numel():
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def weights_key(policy, *extra, adapter: str = "actor") -> str:
    """The fingerprint of what generation serves: with LoRA, the adapter's own weights (the base is frozen and
    named by its path and quantization in `extra`); without, every weight."""
    model = policy.model
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    state = base.state_dict()
    if getattr(policy, "adapters", None):
        state = {k: v for k, v in state.items() if "lora_" in k and f".{adapter}." in k}
    return fingerprint(state, *extra)


# ---------------------------------------------------------------------------------------------------------------
# Conversion and the served model

def _convert(state: dict, config, tokenizer, dest: Path, quantization: str | None = None) -> None:
    """Write `state` (a plain state dict of a model of `config`) as a CTranslate2 model into `dest`."""
    import gc

    import torch
    from ctranslate2.converters import transformers as ct2t
    from ctranslate2.specs import model_spec
    from transformers import AutoModelForCausalLM

    loader = ct2t._MODEL_LOADERS.get(type(config).__name__)
    if loader is None:
        raise RuntimeError(f"CTranslate2 has no converter for {type(config).__name__} (set generation_backend "
                           "'transformers')")
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(state, strict=False, assign=True)
    missing = [k for k, p in model.state_dict().items() if p.is_meta]
    if missing:
        raise RuntimeError(f"the merged weights miss {missing[:3]}")
    model.eval()
    collect, gc.collect = gc.collect, (lambda *a, **k: 0)  # the loader collects once per layer (seconds, nothing freed)
    try:
        with torch.no_grad():
            spec = loader(model, tokenizer)
    finally:
        gc.collect = collect
    spec.validate()
    _alias_duplicates(spec, model_spec)
    spec._quantize(quantization)
    dest.mkdir(parents=True)
    spec.save(str(dest))


def _alias_duplicates(spec, model_spec) -> None:
    """What `ModelSpec._alias_variables` does (a later variable equal to an earlier one becomes its alias, e.g. a
    tied output projection), by content digest instead of comparing every pair of same-shaped tensors."""
    first = {}
    for name, value in spec.variables(ordered=True):
        if isinstance(value, str) or value.is_scalar():
            continue
        arr = value.numpy()
        key = (tuple(arr.shape), str(arr.dtype), hashlib.blake2b(arr.tobytes(), digest_size=16).digest())
        if key not in first:
            first[key] = name
            continue
        scope, attr = model_spec._parent_scope(name)
        if attr not in model_spec.SKIP_CREATING_ALIAS:
            setattr(model_spec.index_spec(spec, scope), attr, first[key])


class _Served:
    lock = threading.Lock()
    key: str | None = None
    generator = None
    stats: dict = {}


def served_model(policy, *, compute_type: str = "float32", threads: int = 0):
    """A `ctranslate2.Generator` serving the policy's current weights (see the module docstring).

    Returns the same generator while the weights are unchanged; `stats()` says what the last call did and cost
    (`key_s` fingerprinting the weights, `convert_s` merging and converting, `load_s` loading)."""
    ct2 = _ct2()
    from ..model import resolve_model

    t0 = time.perf_counter()
    model_dir = resolve_model(policy.config.model)
    quantization = getattr(policy.config, "quantization", "full")
    key = weights_key(policy, str(model_dir), quantization, compute_type, ct2.__version__)
    t_key = time.perf_counter() - t0
    with _Served.lock:
        if _Served.key == key:
            _Served.stats = {"refresh": "reused", "key_s": t_key, "convert_s": 0.0, "load_s": 0.0}
            CLOCK.add("model/serve", t_key)
            return _Served.generator
        root = cache_dir()
        dest, convert_s = root / key, 0.0
        if not (dest / "model.bin").is_file():
            t1 = time.perf_counter()
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=root, prefix=".tmp-"))
            try:
                quant = None if compute_type in ("float32", "default") else _storage(compute_type)
                state = {k: v.cpu() for k, v in merged_state_dict(policy).items()}
                base = policy.model.get_base_model() if hasattr(policy.model, "get_base_model") else policy.model
                _convert(state, base.config, policy.tokenizer, tmp / "m", quant)
                (tmp / "m").rename(dest)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            convert_s = time.perf_counter() - t1
        dest.touch()
        _prune(root)
        t2 = time.perf_counter()
        _Served.generator = None  # drop the previous model before loading the next
        device = "cuda" if next(policy.model.parameters()).is_cuda else "cpu"
        _Served.generator = ct2.Generator(str(dest), device=device, compute_type=compute_type, intra_threads=threads)
        _Served.key = key
        _Served.stats = {"refresh": "converted" if convert_s else "loaded", "key_s": t_key,
                         "convert_s": convert_s, "load_s": time.perf_counter() - t2}
        CLOCK.add("model/serve", time.perf_counter() - t0)
        return _Served.generator


def stats() -> dict:
    """What the last `served_model` call did ('reused', 'loaded' from the disk cache, 'converted') and its seconds."""
    return dict(_Served.stats)


def _storage(compute_type: str) -> str:
    return {"int8_float32": "int8", "int8": "int8", "int16": "int16", "float16": "float16",
            "bfloat16": "bfloat16"}.get(compute_type, compute_type)


def _prune(root: Path) -> None:
    dirs = sorted((d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")),
                  key=lambda d: d.stat().st_mtime, reverse=True)
    for d in dirs[DISK_CACHE:]:
        shutil.rmtree(d, ignore_errors=True)
