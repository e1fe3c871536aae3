#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( python3 -c "import json; d=json.load(open('step1/settings.json')); d['limits']['workers']=345; d['features'].append('arrow'); json.dump(d, open('step1/settings.json','w'), indent=2)"
)
mkdir -p step2
( cat > step2/indigo.sh <<'EOF'
#!/bin/bash
grep -c . "$1"
EOF
chmod +x step2/indigo.sh
)
mkdir -p step3
( awk -F, 'NR==1 || $3 > 57' step3/frost_beacon.csv > step3/filtered.csv
)
