#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
python3 -c "import csv,json; rows=list(csv.DictReader(open('silver_birch.csv')));
[r.update(points=int(r['points'])) for r in rows]; json.dump(rows, open('silver_birch.json','w'))"
