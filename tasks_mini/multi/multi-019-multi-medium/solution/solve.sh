#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( tar -czf step1/sage_backup.tar.gz -C step1 sage
)
mkdir -p step2
( cat > step2/tools.py <<'EOF'
"""Helpers for the import job."""


def calc_value(xs):
    return sum(xs) / len(xs)
EOF
)
