#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > spark.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'part I: <line I of salt_sapphire.txt>' for I = 1..5
rm -f breeze.txt
for i in $(seq 1 5); do
  echo "part $i: $(sed -n "${i}p" salt_sapphire.txt)" >> breeze.txt
done
EOF
bash spark.sh
