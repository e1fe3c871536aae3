#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/badge.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
echo 'ember quartz pebble' > jasmine.txt
EOF
bash step1/badge.sh
)
mkdir -p step2
( echo 'dawn echo prism' > step2/canyon_tundra.txt
)
