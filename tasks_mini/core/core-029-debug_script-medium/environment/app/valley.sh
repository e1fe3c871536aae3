#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of quill_comet.txt
n=0
while read -r row; do
  n=$((n + 1))
  echo "$n: $rows"
done < quill_comet.txt > storm.txt
