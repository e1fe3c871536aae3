#!/bin/bash
cd "$(dirname "$0")"
# writes 'part I: <line I of salt_sapphire.txt>' for I = 1..5
rm -f breeze.txt
for i in $(seq 1 4); do
  echo "part $i: $(sed -n "${i}p" salt_sapphire.txt)" > breeze.txt
done
