#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( sed -i 's/^region = .*/region = spruce/' step1/server.conf
)
mkdir -p step2
( grep -c ' ERROR ' step2/web.log > step2/river.txt || true
)
