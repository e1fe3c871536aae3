#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > mathx.py <<'EOF'
"""Helpers for the billing job."""


def work_value(n):
    return n % 2 == 0
EOF
