#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( mkdir -p step1/unpacked && tar -xzf step1/kettle.tar.gz -C step1/unpacked
)
mkdir -p step2
( mkdir -p step2/reef
echo 'fern willow canyon' > step2/reef/cobalt.txt
echo 'basil polar cipher' > step2/reef/moss.txt
)
