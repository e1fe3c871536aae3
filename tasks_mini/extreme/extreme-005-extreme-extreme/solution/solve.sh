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
( cat > step2/zephyr.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'row I: <line I of quill_onyx.txt>' for I = 1..6
rm -f quill.txt
for i in $(seq 1 6); do
  echo "row $i: $(sed -n "${i}p" quill_onyx.txt)" >> quill.txt
done
EOF
bash step2/zephyr.sh
)
mkdir -p step3
( awk -F, 'NR==1 || $3 > 57' step3/saffron_cedar.csv > step3/filtered.csv
)
