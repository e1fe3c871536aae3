#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/zephyr.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'item I: <line I of cedar_cipher.txt>' for I = 1..5
rm -f salt.txt
for i in $(seq 1 5); do
  echo "item $i: $(sed -n "${i}p" cedar_cipher.txt)" >> salt.txt
done
EOF
bash step1/zephyr.sh
)
mkdir -p step2
( tr ' ' '\n' < step2/lunar_reef.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step2/lunar_kettle.txt
)
mkdir -p step3
( mkdir -p step3/work && tar -xzf step3/frost.tar.gz -C step3/work
echo 'meadow lagoon glacier' >> step3/work/frost/spruce.txt
echo 2 > step3/work/frost/VERSION
tar -czf step3/frost_v2.tar.gz -C step3/work frost
rm -rf step3/work
)
