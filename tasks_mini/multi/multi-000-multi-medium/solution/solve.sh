#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( python3 -c "import csv,json; rows=list(csv.DictReader(open('step1/cotton_kettle.csv')));
[r.update(points=int(r['points'])) for r in rows]; json.dump(rows, open('step1/cotton_kettle.json','w'))"
)
mkdir -p step2
( cat > step2/comet.sh <<'EOF'
#!/bin/bash
echo "Hi, $1!"
EOF
chmod +x step2/comet.sh
)
