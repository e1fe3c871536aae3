#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
{ echo 'city,total_points'; tail -n +2 horizon_meteor.csv | awk -F, '{s[$2]+=$3} END{for (c in s) print c","s[c]}' | sort; } > summary.csv
