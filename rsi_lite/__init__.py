"""rsi-lite: Terminal-RSI (recursive self-rewrite + policy refinement for terminal agents) at small scale."""

import logging as _logging

__version__ = "0.1.0"

# bitsandbytes (imported by peft) warns at import, on every CPU machine without the optional `kernels` package,
# that its faster 4-bit CPU kernel is missing: noise in every model-loading notebook cell and in `make demo`,
# and nothing for a reader to act on (4-bit runs without it; the kit's default is LoRA on an fp32 base)
_logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(_logging.ERROR)
