#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( tar -czf step1/copper_backup.tar.gz -C step1 copper
)
mkdir -p step2
( tail -n +2 step2/linen_cloud.csv | wc -l > step2/marble.txt
)
