#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
printf '#!/bin/bash\necho "orbit quill spruce"\n' > zephyr.sh
chmod +x zephyr.sh
