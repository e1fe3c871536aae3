#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
head -n 3 ember_reef.txt > jasmine_sky.txt
