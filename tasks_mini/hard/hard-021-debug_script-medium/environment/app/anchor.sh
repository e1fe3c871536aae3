#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of indigo_bloom.txt
n=0
while read -r row; do
  n=$((n + 1))
  echo "$n: $rows"
done < indigo_bloom.txt > jasmine.txt
