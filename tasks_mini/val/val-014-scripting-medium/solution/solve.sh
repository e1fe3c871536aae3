#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > cipher.sh <<'EOF'
#!/bin/bash
echo "Welcome, $1!"
EOF
chmod +x cipher.sh
