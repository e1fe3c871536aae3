#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > crystal.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of quill_cable.txt
n=0
while read -r line; do
  n=$((n + 1))
  echo "$n: $line"
done < quill_cable.txt > flint.txt
EOF
bash crystal.sh
