#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
( echo 'jasmine cable plum' > step1/quartz_onyx.txt
)
( sed -i 's/\bgarden\b/pine/g' step2/atlas_badge.txt
)
