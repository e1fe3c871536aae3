#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > lib.py <<'EOF'
"""Helpers for the stats job."""


def helper_result(n):
    total = 0
    for i in range(1, n + 1):
        total += i
    return total
EOF
