#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( mv step1/lemon_walnut.txt step1/lunar_pepper.txt
)
mkdir -p step2
( python3 -c "import csv,json; rows=list(csv.DictReader(open('step2/plum_dune.csv')));
[r.update(score=int(r['score'])) for r in rows]; json.dump(rows, open('step2/plum_dune.json','w'))"
)
