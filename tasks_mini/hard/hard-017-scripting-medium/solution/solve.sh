#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > garnet.sh <<'EOF'
#!/bin/bash
echo "Hi, $1!"
EOF
chmod +x garnet.sh
