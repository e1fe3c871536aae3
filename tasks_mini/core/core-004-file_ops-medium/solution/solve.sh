#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p robin
echo 'tundra hazel horizon' > robin/field.txt
echo 'spark cable violet' > robin/tundra.txt
