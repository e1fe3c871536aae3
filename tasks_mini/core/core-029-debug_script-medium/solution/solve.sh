#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > valley.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of quill_comet.txt
n=0
while read -r row; do
  n=$((n + 1))
  echo "$n: $row"
done < quill_comet.txt > storm.txt
EOF
bash valley.sh
