#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
awk '{print $5}' server.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $1, $2}' > falcon.txt
awk '$2 == "ERROR" {print substr($1, 12, 2)}' server.log | sort | uniq -c | awk '{print $2, $1}' > errors_by_hour.txt
