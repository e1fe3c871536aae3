#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
sed -i 's/^backup = .*/backup = anchor/' service.cfg
sed -i 's/^region = .*/region = spruce/' service.cfg
echo 'log_level = walnut' >> service.cfg
