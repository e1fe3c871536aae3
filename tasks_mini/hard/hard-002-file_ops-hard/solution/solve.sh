#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
cd inbox
for f in *.*; do e="${f##*.}"; mkdir -p "$e"; mv "$f" "$e/"; done
