#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
head -n 2 spruce_nebula.txt > onyx_robin.txt
