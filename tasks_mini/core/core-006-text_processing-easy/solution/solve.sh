#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
head -n 2 reef_dune.txt > sage_linen.txt
