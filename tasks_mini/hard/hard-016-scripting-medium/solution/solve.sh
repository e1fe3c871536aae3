#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > beacon.sh <<'EOF'
#!/bin/bash
echo "Hello, $1!"
EOF
chmod +x beacon.sh
