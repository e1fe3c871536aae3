#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
sed -i 's/\btopaz\b/cable/g' kettle_nebula.txt
