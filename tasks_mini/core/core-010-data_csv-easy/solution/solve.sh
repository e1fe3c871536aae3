#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
grep '^wendy,' lotus_prism.csv | cut -d, -f3 > lagoon.txt
