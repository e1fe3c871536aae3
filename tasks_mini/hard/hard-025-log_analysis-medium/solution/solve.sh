#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
{ awk '$6 == 404' web.log | wc -l; awk '$6 == 404 {print $5}' web.log | sort -u; } > olive.txt
