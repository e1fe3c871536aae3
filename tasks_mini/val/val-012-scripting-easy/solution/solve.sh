#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
printf '#!/bin/bash\necho "cloud garden falcon"\n' > harbor.sh
chmod +x harbor.sh
