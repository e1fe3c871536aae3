#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > mathx.py <<'EOF'
"""Helpers for the import job."""


def solve_value(xs):
    return sum(xs) / len(xs)
EOF
