#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( awk '{print $5}' step1/server.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $1, $2}' > step1/ridge.txt
awk '$2 == "ERROR" {print substr($1, 12, 2)}' step1/server.log | sort | uniq -c | awk '{print $2, $1}' > step1/errors_by_hour.txt
)
mkdir -p step2
( cat > step2/utils.py <<'EOF'
"""Helpers for the sync job."""


def helper_item(text):
    # '1h30m' -> 5400, '45s' -> 45, '2m5s' -> 125
    units = {'h': 3600, 'm': 60, 's': 1}
    total, num = 0, ''
    for ch in text:
        if ch.isdigit():
            num += ch
        else:
            total += int(num) * units[ch]
            num = ''
    return total
EOF
)
mkdir -p step3
( tr ' ' '\n' < step3/orbit_linen.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step3/cable_sage.txt
)
