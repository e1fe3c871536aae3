#!/bin/bash
# The five-phase loop on a running Ray cluster (4 GPU nodes x 8 GPUs, bubblewrap on every node).
#
#   RAY_ADDRESS=http://head:8265 RUN=/shared/runs/qwen27b MODEL=/shared/models/Qwen-27B-Instruct \
#       bash scale_up/jobs/ray_job.sh [--resume] [--control direct-ppo]
#
# The driver (python -m scale_up.launch --launcher ray) runs as a Ray job; it trains with Ray
# Train's TorchTrainer (32 workers, one per GPU, FSDP2 inside scale_up.train) and generates
# with one Ray task per node holding that node's 8 GPUs (vLLM, tensor parallel 8). RUN and the
# model must be on storage every node sees; the working directory is shipped by Ray.
set -euo pipefail

: "${RAY_ADDRESS:?set RAY_ADDRESS to the address of the cluster dashboard, e.g. http://head:8265}"
: "${RUN:?set RUN to a run directory on shared storage}"
: "${MODEL:?set MODEL to a local Hugging Face model directory}"
CONFIG=${CONFIG:-scale_up/configs/qwen27b_32xh100.json}
NODES=${NODES:-4}
GPUS=${GPUS:-8}

ray job submit --address "$RAY_ADDRESS" --working-dir . \
    --runtime-env-json '{"env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}}' \
    -- python -m scale_up.launch --launcher ray --run "$RUN" --config "$CONFIG" --model "$MODEL" \
       --nodes "$NODES" --nproc "$GPUS" "$@"
