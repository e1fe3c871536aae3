#!/usr/bin/env bash
# Reference solution (given to the oracle only).
set -euo pipefail
cd "${APP_DIR:-/app}"
tar -xzf inputs.tar.gz
mkdir -p step1
( sed -i '/^\[server\]/,/^\[/ s/^port = .*/port = 4313/' step1/settings.ini
)
mkdir -p step2
( mkdir -p step2/work && tar -xzf step2/spark.tar.gz -C step2/work
echo 'pepper dune harbor' >> step2/work/spark/willow.txt
echo 2 > step2/work/spark/VERSION
tar -czf step2/spark_v2.tar.gz -C step2/work spark
rm -rf step2/work
)
mkdir -p step3
( tr ' ' '\n' < step3/beacon_shadow.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n 3 | awk '{print $2, $1}' > step3/zephyr_amber.txt
)
