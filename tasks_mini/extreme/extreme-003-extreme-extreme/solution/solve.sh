#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( tr ' ' '\n' < step1/orchid_coral.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step1/ridge_indigo.txt
)
mkdir -p step2
( cd step2/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
mkdir -p step3
( python3 -c "import json; d=json.load(open('step3/settings.json')); d['limits']['workers']=493; d['features'].append('river'); json.dump(d, open('step3/settings.json','w'), indent=2)"
)
