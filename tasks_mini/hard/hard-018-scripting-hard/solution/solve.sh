#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > indigo.sh <<'EOF'
#!/bin/bash
awk 'length > max {max = length; line = $0} END {print line}' "$1"
EOF
chmod +x indigo.sh
