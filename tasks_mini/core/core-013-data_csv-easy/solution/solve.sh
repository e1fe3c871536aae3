#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
grep '^rupert,' stone_pepper.csv | cut -d, -f3 > cipher.txt
