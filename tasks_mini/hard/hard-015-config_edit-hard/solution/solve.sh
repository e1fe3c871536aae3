#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
sed -i '/^\[cache\]/,/^\[/ s/^timeout = .*/timeout = 466/' service.ini
