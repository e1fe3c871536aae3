#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
( sed -i '/^\[server\]/,/^\[/ s/^timeout = .*/timeout = 262/' step1/settings.ini
)
( cat > step2/willow.sh <<'EOF'
#!/bin/bash
awk 'length > max {max = length; line = $0} END {print line}' "$1"
EOF
chmod +x step2/willow.sh
)
( cd step3/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
