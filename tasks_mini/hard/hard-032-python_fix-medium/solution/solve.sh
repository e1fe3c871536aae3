#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > lib.py <<'EOF'
"""Helpers for the billing job."""


def solve_data(s):
    return s == s[::-1]
EOF
