#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( cat > step1/core.py <<'EOF'
"""Helpers for the report job."""


def helper_data(a, b):
    return a + b
EOF
)
mkdir -p step2
( tar -czf step2/cipher_backup.tar.gz -C step2 cipher
)
