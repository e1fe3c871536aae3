#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( tr ' ' '\n' < step1/winter_desert.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step1/robin_juniper.txt
)
mkdir -p step2
( cat > step2/lib.py <<'EOF'
"""Helpers for the billing job."""


def solve_result(words):
    # counts words case-insensitively, returns a dict
    counts = {}
    for w in words:
        w = w.lower()
        counts[w] = counts.get(w, 0) + 1
    return counts
EOF
)
mkdir -p step3
( cd step3/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
