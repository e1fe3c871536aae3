#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/lib.py <<'EOF'
"""Helpers for the import job."""


def helper_item(n):
    return n % 2 == 0
EOF
)
mkdir -p step2
( printf '#!/bin/bash\necho "bloom prism tundra"\n' > step2/radar.sh
chmod +x step2/radar.sh
)
