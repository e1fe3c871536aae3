#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
chmod 600 meteor.key
chmod 644 birch.pub
