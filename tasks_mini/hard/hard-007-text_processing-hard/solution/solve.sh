#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tr ' ' '\n' < polar_mint.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > tundra_badge.txt
