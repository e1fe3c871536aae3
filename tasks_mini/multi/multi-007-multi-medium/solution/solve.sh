#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
( sed -i 's/^region = .*/region = spruce/' step1/server.conf
)
( grep -c ' ERROR ' step2/web.log > step2/river.txt || true
)
