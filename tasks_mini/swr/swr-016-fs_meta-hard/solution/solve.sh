#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
ln -s releases/v6 current
chmod 444 releases/v3/*
chmod 444 releases/v4/*
