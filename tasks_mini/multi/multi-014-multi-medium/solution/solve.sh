#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
mkdir -p step1
( cat > step1/arrow.sh <<'EOF'
#!/bin/bash
echo "Hi, $1!"
EOF
chmod +x step1/arrow.sh
)
mkdir -p step2
( echo 'crystal sky linen' > step2/birch_apple.txt
)
