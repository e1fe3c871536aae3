#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p harbor
echo 'dawn cloud slate' > harbor/flint.txt
echo 'crystal bloom polar' > harbor/cherry.txt
