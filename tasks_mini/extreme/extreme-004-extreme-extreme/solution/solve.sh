#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/lib.py <<'EOF'
"""Helpers for the import job."""


def solve_item(words):
    # counts words case-insensitively, returns a dict
    counts = {}
    for w in words:
        w = w.lower()
        counts[w] = counts.get(w, 0) + 1
    return counts
EOF
)
mkdir -p step2
( cat > step2/slate.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'item I: <line I of crystal_lunar.txt>' for I = 1..5
rm -f comet.txt
for i in $(seq 1 5); do
  echo "item $i: $(sed -n "${i}p" crystal_lunar.txt)" >> comet.txt
done
EOF
bash step2/slate.sh
)
mkdir -p step3
( cd step3/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
