#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
( tr 'a-z' 'A-Z' < step1/nebula_sunset.txt > step1/storm_dune.txt
)
( grep -c ' ERROR ' step2/web.log > step2/maple.txt || true
)
