#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( awk '{print $5}' step1/web.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $1, $2}' > step1/orchid.txt
awk '$2 == "ERROR" {print substr($1, 12, 2)}' step1/web.log | sort | uniq -c | awk '{print $2, $1}' > step1/errors_by_hour.txt
)
mkdir -p step2
( cat > step2/stone.sh <<'EOF'
#!/bin/bash
grep -c . "$1"
EOF
chmod +x step2/stone.sh
)
mkdir -p step3
( python3 -c "import json; d=json.load(open('step3/settings.json')); d['limits']['workers']=43; d['features'].append('nebula'); json.dump(d, open('step3/settings.json','w'), indent=2)"
)
