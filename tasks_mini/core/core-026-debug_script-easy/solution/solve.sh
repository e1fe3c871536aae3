#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > velvet.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
echo 'violet valley plum' > tundra.txt
EOF
bash velvet.sh
