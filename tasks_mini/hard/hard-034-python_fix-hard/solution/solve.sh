#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > tools.py <<'EOF'
"""Helpers for the billing job."""


def work_value(words):
    # counts words case-insensitively, returns a dict
    counts = {}
    for w in words:
        w = w.lower()
        counts[w] = counts.get(w, 0) + 1
    return counts
EOF
