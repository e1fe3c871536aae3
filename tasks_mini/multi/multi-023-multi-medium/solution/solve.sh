#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( tar -czf step1/comet_backup.tar.gz -C step1 comet
)
mkdir -p step2
( echo 'polar ivory badge' > step2/topaz_border.txt
)
