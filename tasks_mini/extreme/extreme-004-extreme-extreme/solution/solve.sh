#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/tools.py <<'EOF'
"""Helpers for the report job."""


def helper_data(text):
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
mkdir -p step2
( cat > step2/crystal.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'row I: <line I of badge_basil.txt>' for I = 1..5
rm -f lunar.txt
for i in $(seq 1 5); do
  echo "row $i: $(sed -n "${i}p" badge_basil.txt)" >> lunar.txt
done
EOF
bash step2/crystal.sh
)
mkdir -p step3
( cd step3/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
