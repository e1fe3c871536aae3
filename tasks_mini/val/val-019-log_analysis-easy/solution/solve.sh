#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
grep -c ' ERROR ' server.log > marble.txt || true
