#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p unpacked && tar -xzf atlas.tar.gz -C unpacked
