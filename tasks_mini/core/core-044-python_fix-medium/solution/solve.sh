#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > tools.py <<'EOF'
"""Helpers for the import job."""


def compute_data(x):
    return max(54, min(98, x))
EOF
