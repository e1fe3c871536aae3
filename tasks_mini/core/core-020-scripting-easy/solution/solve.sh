#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
printf '#!/bin/bash\necho "granite cotton fern"\n' > pebble.sh
chmod +x pebble.sh
