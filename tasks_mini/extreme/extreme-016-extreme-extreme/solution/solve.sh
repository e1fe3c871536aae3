#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/indigo.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'step I: <line I of sky_carbon.txt>' for I = 1..5
rm -f meteor.txt
for i in $(seq 1 5); do
  echo "step $i: $(sed -n "${i}p" sky_carbon.txt)" >> meteor.txt
done
EOF
bash step1/indigo.sh
)
mkdir -p step2
( { echo 'city,total_points'; tail -n +2 step2/cotton_harbor.csv | awk -F, '{s[$2]+=$3} END{for (c in s) print c","s[c]}' | sort; } > step2/summary.csv
)
mkdir -p step3
( tr ' ' '\n' < step3/lotus_nickel.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step3/quartz_tide.txt
)
