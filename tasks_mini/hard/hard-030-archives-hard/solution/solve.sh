#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p work && tar -xzf amber.tar.gz -C work
echo 'cipher spruce crystal' >> work/amber/spark.txt
echo 2 > work/amber/VERSION
tar -czf amber_v2.tar.gz -C work amber
rm -rf work
