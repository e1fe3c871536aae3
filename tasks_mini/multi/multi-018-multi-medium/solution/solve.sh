#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( tac step1/desert_candle.txt > step1/dune_river.txt
)
mkdir -p step2
( mkdir -p step2/extracted && tar -xzf step2/storm.tar.gz -C step2/extracted
)
