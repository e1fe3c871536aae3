#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p walnut
echo 'bloom pebble cotton' > walnut/canyon.txt
echo 'willow nebula tundra' > walnut/desert.txt
