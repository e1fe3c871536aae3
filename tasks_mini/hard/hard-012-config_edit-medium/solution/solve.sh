#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
sed -i 's/^user = .*/user = cloud/' service.cfg
sed -i 's/^cache_size = .*/cache_size = 91/' service.cfg
echo 'workers = 247' >> service.cfg
