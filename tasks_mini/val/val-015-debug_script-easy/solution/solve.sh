#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cat > quill.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
echo 'plum pebble pine' > atlas.txt
EOF
bash quill.sh
