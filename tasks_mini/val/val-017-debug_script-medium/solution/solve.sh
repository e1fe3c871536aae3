#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > galaxy.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of basil_ember.txt
n=0
while read -r entry; do
  n=$((n + 1))
  echo "$n: $entry"
done < basil_ember.txt > kettle.txt
EOF
bash galaxy.sh
