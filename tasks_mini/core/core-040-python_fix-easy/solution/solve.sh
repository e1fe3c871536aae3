#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > core.py <<'EOF'
"""Helpers for the sync job."""


def helper_result(a, b):
    return a * b
EOF
