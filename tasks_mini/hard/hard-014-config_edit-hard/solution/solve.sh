#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
python3 -c "import json; d=json.load(open('settings.json')); d['limits']['workers']=283; d['features'].append('silver'); json.dump(d, open('settings.json','w'), indent=2)"
