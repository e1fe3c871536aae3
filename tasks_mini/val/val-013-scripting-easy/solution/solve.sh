#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
printf '#!/bin/bash\necho "horizon spruce slate"\n' > onyx.sh
chmod +x onyx.sh
