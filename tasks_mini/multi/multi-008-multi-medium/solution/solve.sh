#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( awk -F, 'NR>1 {s+=$3} END {print s}' step1/dawn_amber.csv > step1/falcon.txt
)
mkdir -p step2
( mkdir -p step2/delta
echo 'moss cable cotton' > step2/delta/iris.txt
echo 'oak desert ember' > step2/delta/granite.txt
)
