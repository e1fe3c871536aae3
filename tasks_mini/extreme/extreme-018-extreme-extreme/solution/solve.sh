#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( awk '{print $5}' step1/server.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $1, $2}' > step1/juniper.txt
awk '$2 == "ERROR" {print substr($1, 12, 2)}' step1/server.log | sort | uniq -c | awk '{print $2, $1}' > step1/errors_by_hour.txt
)
mkdir -p step2
( cd step2/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
mkdir -p step3
( cat > step3/tools.py <<'EOF'
"""Helpers for the report job."""


def process_value(prices):
    # total with 19% tax, rounded to cents
    total = 0
    for p in prices:
        total += p * (1 + 19 / 100)
    return round(total, 2)
EOF
)
