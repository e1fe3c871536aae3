#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p out && tar -xzf jasmine.tar.gz -C out
