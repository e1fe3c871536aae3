#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( python3 -c "import json; d=json.load(open('step1/settings.json')); d['limits']['workers']=385; d['features'].append('cloud'); json.dump(d, open('step1/settings.json','w'), indent=2)"
)
mkdir -p step2
( cd step2/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
mkdir -p step3
( awk '{print $5}' step3/access.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $1, $2}' > step3/island.txt
awk '$2 == "ERROR" {print substr($1, 12, 2)}' step3/access.log | sort | uniq -c | awk '{print $2, $1}' > step3/errors_by_hour.txt
)
