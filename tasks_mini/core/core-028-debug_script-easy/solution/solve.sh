#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > winter.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
echo 'basil oak summit' > ocean.txt
EOF
bash winter.sh
