#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > moss.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
echo 'sage reef tulip' > velvet.txt
EOF
bash moss.sh
