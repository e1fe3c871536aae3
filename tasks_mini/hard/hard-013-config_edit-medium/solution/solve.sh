#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
sed -i 's/^max_conn = .*/max_conn = 498/' settings.ini
sed -i 's/^backup = .*/backup = glacier/' settings.ini
echo 'log_level = dune' >> settings.ini
