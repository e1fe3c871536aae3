#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p work && tar -xzf nebula.tar.gz -C work
echo 'cobalt canyon birch' >> work/nebula/crystal.txt
echo 2 > work/nebula/VERSION
tar -czf nebula_v2.tar.gz -C work nebula
rm -rf work
