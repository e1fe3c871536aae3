#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > lib.py <<'EOF'
"""Helpers for the report job."""


def work_data(a, b):
    return a * b
EOF
