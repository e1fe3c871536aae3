#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( grep -c ' ERROR ' step1/web.log > step1/pine.txt || true
)
mkdir -p step2
( cat > step2/mathx.py <<'EOF'
"""Helpers for the sync job."""


def calc_result(a, b):
    return a + b
EOF
)
