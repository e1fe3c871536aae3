#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > utils.py <<'EOF'
"""Helpers for the import job."""


def work_result(words):
    # counts words case-insensitively, returns a dict
    counts = {}
    for w in words:
        w = w.lower()
        counts[w] = counts.get(w, 0) + 1
    return counts
EOF
