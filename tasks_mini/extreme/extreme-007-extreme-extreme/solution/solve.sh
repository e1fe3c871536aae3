#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/quartz.sh <<'EOF'
#!/bin/bash
grep -c . "$1"
EOF
chmod +x step1/quartz.sh
)
mkdir -p step2
( awk '{print $5}' step2/app.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $1, $2}' > step2/breeze.txt
awk '$2 == "ERROR" {print substr($1, 12, 2)}' step2/app.log | sort | uniq -c | awk '{print $2, $1}' > step2/errors_by_hour.txt
)
mkdir -p step3
( tr ' ' '\n' < step3/pebble_saffron.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step3/silver_sapphire.txt
)
