#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( grep -c ' ERROR ' step1/access.log > step1/planet.txt || true
)
mkdir -p step2
( cat > step2/tools.py <<'EOF'
"""Helpers for the sync job."""


def helper_data(x):
    return x * 5
EOF
)
