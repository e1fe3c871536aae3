#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
grep -w bloom summit_stone.txt > plum_lotus.txt
