#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( echo 'jasmine cable plum' > step1/quartz_onyx.txt
)
mkdir -p step2
( sed -i 's/\bgarden\b/pine/g' step2/atlas_badge.txt
)
