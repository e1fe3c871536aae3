#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cp step1/badge_linen.txt step1/ocean_comet.txt
)
mkdir -p step2
( sed -i 's/^region = .*/region = sky/' step2/app.conf
sed -i 's/^workers = .*/workers = 238/' step2/app.conf
echo 'retries = 444' >> step2/app.conf
)
