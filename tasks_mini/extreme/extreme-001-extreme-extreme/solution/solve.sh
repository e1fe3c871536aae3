#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/mathx.py <<'EOF'
"""Helpers for the stats job."""


def solve_result(text):
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
( cd step2/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
mkdir -p step3
( mkdir -p step3/work && tar -xzf step3/arrow.tar.gz -C step3/work
echo 'forest plum basil' >> step3/work/arrow/jade.txt
echo 2 > step3/work/arrow/VERSION
tar -czf step3/arrow_v2.tar.gz -C step3/work arrow
rm -rf step3/work
)
