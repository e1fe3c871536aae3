#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > pepper.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'step I: <line I of badge_cotton.txt>' for I = 1..7
rm -f cedar.txt
for i in $(seq 1 7); do
  echo "step $i: $(sed -n "${i}p" badge_cotton.txt)" >> cedar.txt
done
EOF
bash pepper.sh
