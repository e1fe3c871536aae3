#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
grep '^heidi,' coral_onyx.csv | cut -d, -f3 > planet.txt
