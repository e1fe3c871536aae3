#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > spark.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
echo 'coral cotton birch' > sunset.txt
EOF
bash spark.sh
