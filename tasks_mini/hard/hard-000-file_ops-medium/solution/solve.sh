#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p frost
echo 'pine cedar garnet' > frost/island.txt
echo 'summit quill meadow' > frost/cedar.txt
