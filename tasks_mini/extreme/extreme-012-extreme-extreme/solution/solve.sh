#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/cherry.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'part I: <line I of mint_tundra.txt>' for I = 1..7
rm -f north.txt
for i in $(seq 1 7); do
  echo "part $i: $(sed -n "${i}p" mint_tundra.txt)" >> north.txt
done
EOF
bash step1/cherry.sh
)
mkdir -p step2
( cat > step2/tools.py <<'EOF'
"""Helpers for the billing job."""


def calc_value(prices):
    # total with 20% tax, rounded to cents
    total = 0
    for p in prices:
        total += p * (1 + 20 / 100)
    return round(total, 2)
EOF
)
mkdir -p step3
( cat > step3/falcon.sh <<'EOF'
#!/bin/bash
awk 'length > max {max = length; line = $0} END {print line}' "$1"
EOF
chmod +x step3/falcon.sh
)
