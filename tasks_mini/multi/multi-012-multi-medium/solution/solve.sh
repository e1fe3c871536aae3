#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( sed -i 's/^host = .*/host = cedar/' step1/app.conf
sed -i 's/^region = .*/region = glacier/' step1/app.conf
echo 'max_conn = 26' >> step1/app.conf
)
mkdir -p step2
( mkdir -p step2/unpacked && tar -xzf step2/jasmine.tar.gz -C step2/unpacked
)
