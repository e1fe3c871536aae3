#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( mkdir -p step1/work && tar -xzf step1/iris.tar.gz -C step1/work
echo 'flint planet delta' >> step1/work/iris/forest.txt
echo 2 > step1/work/iris/VERSION
tar -czf step1/iris_v2.tar.gz -C step1/work iris
rm -rf step1/work
)
mkdir -p step2
( cd step2/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
mkdir -p step3
( python3 -c "import json; d=json.load(open('step3/settings.json')); d['limits']['workers']=109; d['features'].append('planet'); json.dump(d, open('step3/settings.json','w'), indent=2)"
)
