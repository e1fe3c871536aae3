#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > desert.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
printf 'horizon solar granite\n' > tide.txt
EOF
bash desert.sh
