#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
sed -i 's/^backup = .*/backup = valley/' settings.ini
sed -i 's/^timeout = .*/timeout = 143/' settings.ini
echo 'retries = 195' >> settings.ini
