#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cd step1/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
mkdir -p step2
( cat > step2/arrow.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'item I: <line I of violet_lagoon.txt>' for I = 1..6
rm -f valley.txt
for i in $(seq 1 6); do
  echo "item $i: $(sed -n "${i}p" violet_lagoon.txt)" >> valley.txt
done
EOF
bash step2/arrow.sh
)
mkdir -p step3
( mkdir -p step3/work && tar -xzf step3/jade.tar.gz -C step3/work
echo 'lunar forest kettle' >> step3/work/jade/candle.txt
echo 2 > step3/work/jade/VERSION
tar -czf step3/jade_v2.tar.gz -C step3/work jade
rm -rf step3/work
)
