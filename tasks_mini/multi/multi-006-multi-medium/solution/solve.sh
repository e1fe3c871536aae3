#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( sed -i 's/^timeout = .*/timeout = 449/' step1/settings.ini
)
mkdir -p step2
( awk '{print $3}' step2/server.log | sort -u > step2/lemon.txt
)
