#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( cat > step1/linen.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of timber_willow.txt
n=0
while read -r row; do
  n=$((n + 1))
  echo "$n: $row"
done < timber_willow.txt > garden.txt
EOF
bash step1/linen.sh
)
mkdir -p step2
( cat > step2/core.py <<'EOF'
"""Helpers for the import job."""


def helper_result(x):
    return x * 8
EOF
)
