#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tail -n +2 violet_granite.csv | wc -l > pebble.txt
