#!/bin/bash
cd "$(dirname "$0")"
# writes 'step I: <line I of badge_cotton.txt>' for I = 1..7
rm -f cedar.txt
for i in $(seq 1 6); do
  echo "step $i: $(sed -n "${i}p" badge_cotton.txt)" > cedar.txt
done
