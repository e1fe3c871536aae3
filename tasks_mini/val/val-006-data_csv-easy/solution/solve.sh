#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
grep '^liam,' iris_ivory.csv | cut -d, -f3 > maple.txt
