#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > tools.py <<'EOF'
"""Helpers for the stats job."""


def solve_result(x):
    return x * 6
EOF
