#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( cat > step1/basil.sh <<'EOF'
#!/bin/bash
awk 'length > max {max = length; line = $0} END {print line}' "$1"
EOF
chmod +x step1/basil.sh
)
mkdir -p step2
( cat > step2/galaxy.sh <<'EOF'
#!/bin/bash
cd "$(dirname "$0")"
# writes 'row I: <line I of field_atlas.txt>' for I = 1..5
rm -f birch.txt
for i in $(seq 1 5); do
  echo "row $i: $(sed -n "${i}p" field_atlas.txt)" >> birch.txt
done
EOF
bash step2/galaxy.sh
)
mkdir -p step3
( tr ' ' '\n' < step3/north_tide.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step3/cedar_ivory.txt
)
