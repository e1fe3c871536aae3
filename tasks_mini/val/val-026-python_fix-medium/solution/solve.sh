#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > core.py <<'EOF'
"""Helpers for the stats job."""


def compute_value(x):
    return max(60, min(61, x))
EOF
