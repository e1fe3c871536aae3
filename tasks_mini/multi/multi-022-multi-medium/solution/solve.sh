#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( python3 -c "import csv,json; rows=list(csv.DictReader(open('step1/radar_lunar.csv')));
[r.update(score=int(r['score'])) for r in rows]; json.dump(rows, open('step1/radar_lunar.json','w'))"
)
mkdir -p step2
( grep -c ' ERROR ' step2/server.log > step2/beacon.txt || true
)
