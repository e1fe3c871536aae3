#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
printf '#!/bin/bash\necho "walnut galaxy mint"\n' > planet.sh
chmod +x planet.sh
