#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( tr 'a-z' 'A-Z' < step1/nebula_sunset.txt > step1/storm_dune.txt
)
mkdir -p step2
( grep -c ' ERROR ' step2/web.log > step2/maple.txt || true
)
