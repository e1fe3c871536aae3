#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
python3 -c "import csv,json; rows=list(csv.DictReader(open('orchid_river.csv')));
[r.update(score=int(r['score'])) for r in rows]; json.dump(rows, open('orchid_river.json','w'))"
