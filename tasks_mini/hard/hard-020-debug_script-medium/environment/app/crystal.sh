#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of quill_cable.txt
n=0
while read -r line; do
  n=$((n + 1))
  echo "$n: $lines"
done < quill_cable.txt > flint.txt
