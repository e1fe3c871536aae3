#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( sed -i '/^\[server\]/,/^\[/ s/^timeout = .*/timeout = 262/' step1/settings.ini
)
mkdir -p step2
( cat > step2/willow.sh <<'EOF'
#!/bin/bash
awk 'length > max {max = length; line = $0} END {print line}' "$1"
EOF
chmod +x step2/willow.sh
)
mkdir -p step3
( cd step3/inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
)
