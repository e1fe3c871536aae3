#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/tools.py <<'EOF'
"""Helpers for the import job."""


def work_item(n):
    return n % 2 == 0
EOF
)
mkdir -p step2
( printf '#!/bin/bash\necho "spruce sunset harbor"\n' > step2/meteor.sh
chmod +x step2/meteor.sh
)
