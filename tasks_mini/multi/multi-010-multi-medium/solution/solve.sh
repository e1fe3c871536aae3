#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( mkdir -p step1/raven
echo 'cotton violet willow' > step1/raven/galaxy.txt
echo 'north meadow cable' > step1/raven/crystal.txt
)
mkdir -p step2
( cat > step2/atlas.sh <<'EOF'
#!/bin/bash
echo "Hi, $1!"
EOF
chmod +x step2/atlas.sh
)
