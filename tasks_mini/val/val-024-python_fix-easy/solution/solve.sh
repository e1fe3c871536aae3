#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > mathx.py <<'EOF'
"""Helpers for the sync job."""


def solve_value(x):
    return x * 8
EOF
