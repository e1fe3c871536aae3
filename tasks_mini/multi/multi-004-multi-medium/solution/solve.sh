#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( tac step1/delta_quartz.txt > step1/zephyr_breeze.txt
)
mkdir -p step2
( mkdir -p step2/spark
echo 'ocean lemon falcon' > step2/spark/meadow.txt
echo 'apple linen indigo' > step2/spark/radar.txt
)
