#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > anchor.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of indigo_bloom.txt
n=0
while read -r row; do
  n=$((n + 1))
  echo "$n: $row"
done < indigo_bloom.txt > jasmine.txt
EOF
bash anchor.sh
