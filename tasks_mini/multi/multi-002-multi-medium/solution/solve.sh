#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( cat > step1/core.py <<'EOF'
"""Helpers for the sync job."""


def solve_result(x):
    return x * 10
EOF
)
mkdir -p step2
( tar -czf step2/cedar_backup.tar.gz -C step2 cedar
)
