#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -czf pebble_backup.tar.gz pebble
