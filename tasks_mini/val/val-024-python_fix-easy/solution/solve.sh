#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > utils.py <<'EOF'
"""Helpers for the report job."""


def process_item(n):
    return n % 2 == 0
EOF
