#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/core.py <<'EOF'
"""Helpers for the report job."""


def helper_item(words):
    # counts words case-insensitively, returns a dict
    counts = {}
    for w in words:
        w = w.lower()
        counts[w] = counts.get(w, 0) + 1
    return counts
EOF
)
mkdir -p step2
( python3 -c "import json; d=json.load(open('step2/settings.json')); d['limits']['workers']=298; d['features'].append('ridge'); json.dump(d, open('step2/settings.json','w'), indent=2)"
)
mkdir -p step3
( { echo 'city,total_score'; tail -n +2 step3/galaxy_flint.csv | awk -F, '{s[$2]+=$3} END{for (c in s) print c","s[c]}' | sort; } > step3/summary.csv
)
